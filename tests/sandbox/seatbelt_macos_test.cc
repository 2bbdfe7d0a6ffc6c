// The macOS part of the sandbox suite (issue 19): hostile blocks under the real Seatbelt
// lockbox. Built wherever sandbox=seatbelt (the cross builds compile and link it), run only on
// a Mac: `scripts/test` there, as an ordinary user. Each test has a control that must succeed,
// so a broken harness cannot pass as "denied".
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/sysctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string lockbox() {
  return STACKIE_LOCKBOX_PATH;
}

// Runs `stackie-lockbox ARGS -- /bin/sh -c SCRIPT`; returns its exit code. `lifeline`: the fd
// the lockbox gets as --lifeline-fd (kept open in the child only).
int run_block(const std::vector<std::string>& args, const std::string& script, int lifeline = -1,
              pid_t* started = nullptr) {
  std::vector<std::string> argv{lockbox()};
  argv.insert(argv.end(), args.begin(), args.end());
  if (lifeline >= 0) argv.insert(argv.end(), {"--lifeline-fd", std::to_string(lifeline)});
  argv.insert(argv.end(), {"--setenv", "PATH", "/usr/bin:/bin", "--", "/bin/sh", "-c", script});
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  if (started != nullptr) {
    *started = pid;
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string temp_dir(const std::string& tag) {
  // Under $HOME, not /tmp: the profile grants nothing under /tmp, so a denial there proves
  // nothing about the grants.
  std::string pattern = std::string(std::getenv("HOME")) + "/.stackie-test-" + tag + "-XXXXXX";
  char* made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return text;
}

// Alive and not a zombie (a killed orphan may wait a moment for launchd to reap it).
bool alive(pid_t pid) {
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid};
  struct kinfo_proc info {};
  size_t size = sizeof info;
  if (sysctl(mib, 4, &info, &size, nullptr, 0) != 0 || size == 0) return false;
  return info.kp_proc.p_stat != SZOMB;
}

int listen_on(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 4) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class SeatbeltHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() == 0) GTEST_FAIL() << "run the sandbox suite as an ordinary user";
    a_ = temp_dir("a");
    b_ = temp_dir("b");
    ASSERT_FALSE(a_.empty() || b_.empty());
    write_file(b_ + "/secret", "other block's data");
  }
  void TearDown() override {
    fs::remove_all(a_);
    fs::remove_all(b_);
  }
  std::vector<std::string> block_a(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--name", "test-a", "--rw", a_, "--tmpdir", a_ + "/tmp"};
    fs::create_directories(a_ + "/tmp");
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::string a_, b_;
};

TEST_F(SeatbeltHostile, CannotReadDocuments) {
  const std::string docs = std::string(std::getenv("HOME")) + "/Documents";
  if (!fs::is_directory(docs)) GTEST_SKIP() << "no ~/Documents on this Mac";
  const std::string bait = docs + "/.stackie-test-bait";
  write_file(bait, "private");
  // Privacy settings (TCC) may keep the terminal itself out of ~/Documents: then a denial
  // inside the block would prove nothing.
  if (read_file(bait) != "private")
    GTEST_SKIP() << "this process cannot write and read ~/Documents itself (Privacy & Security "
                    "settings of the terminal): nothing to prove";
  EXPECT_EQ(run_block(block_a(), "ls '" + a_ + "'"), 0) << "control: its own volume lists";
  EXPECT_NE(run_block(block_a(), "cat '" + bait + "'"), 0) << "read ~/Documents";
  EXPECT_NE(run_block(block_a(), "ls '" + docs + "'"), 0) << "listed ~/Documents";
  fs::remove(bait);
}

TEST_F(SeatbeltHostile, CannotReadAnotherBlocksVolume) {
  write_file(a_ + "/mine", "ok");
  ASSERT_EQ(read_file(b_ + "/secret"), "other block's data") << "control: the bait is there";
  EXPECT_EQ(run_block(block_a(), "cat '" + a_ + "/mine'"), 0) << "control: its own volume";
  EXPECT_NE(run_block(block_a(), "cat '" + b_ + "/secret'"), 0);
  EXPECT_NE(run_block(block_a(), "ls '" + b_ + "'"), 0) << "listed the other block's volume";
}

TEST_F(SeatbeltHostile, CannotWriteOutsideItsGrants) {
  EXPECT_EQ(run_block(block_a(), "echo x > '" + a_ + "/written'"), 0) << "control";
  const std::string home = std::getenv("HOME");
  EXPECT_NE(run_block(block_a(), "echo x > '" + home + "/.stackie-test-escape'"), 0);
  EXPECT_FALSE(fs::exists(home + "/.stackie-test-escape"));
  EXPECT_NE(run_block(block_a(), "echo x > '" + b_ + "/planted'"), 0);
  EXPECT_NE(run_block(block_a(), "echo x > /private/tmp/stackie-test-escape"), 0);
}

// Ports 47xxx: unlikely to be in use; a busy one makes the test fail loudly, not pass.
TEST_F(SeatbeltHostile, LocalhostOnlyTheDeclaredPortsCross) {
  int declared = listen_on(47311), undeclared = listen_on(47312);
  ASSERT_GE(declared, 0);
  ASSERT_GE(undeclared, 0);
  // The lockbox's own flags (stackie-lockbox(1)): what the daemon passes for the ports a block
  // serves and consumes.
  auto args = block_a({"--net", "localhost", "--allow-bind", "47313", "--allow-connect", "47311"});
  EXPECT_EQ(run_block(args, "nc -z -w 2 127.0.0.1 47311"), 0) << "control: a consumed port";
  EXPECT_NE(run_block(args, "nc -z -w 2 127.0.0.1 47312"), 0) << "connected to an undeclared port";
  // nc -l exits at once when bind is denied; on the served port it waits (killed by timeout 1).
  EXPECT_NE(run_block(args,
                      "nc -l 127.0.0.1 47314 & sleep 1; kill $! 2>/dev/null && exit 0; "
                      "exit 1"),
            0)
      << "bound an undeclared port";
  EXPECT_EQ(run_block(args,
                      "nc -l 127.0.0.1 47313 & sleep 1; kill $! 2>/dev/null && exit 0; "
                      "exit 1"),
            0)
      << "control: its served port";
  close(declared);
  close(undeclared);
}

TEST_F(SeatbeltHostile, CannotSignalAnotherBlock) {
  pid_t other = 0;
  run_block({"--name", "test-b", "--rw", b_}, "echo $$ > '" + b_ + "/pid'; exec sleep 60", -1,
            &other);
  std::string pid;
  for (int i = 0; i < 100 && (pid = read_file(b_ + "/pid")).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(pid.empty()) << "block b did not start";
  EXPECT_EQ(run_block(block_a(), "kill -0 $$"), 0) << "control: it may signal itself";
  EXPECT_NE(run_block(block_a(), "kill -TERM " + pid), 0);
  EXPECT_TRUE(alive(std::stoi(pid)));
  kill(other, SIGTERM);
  waitpid(other, nullptr, 0);
}

// No pid namespace on macOS: the monitor must find and kill a child that left the block's
// session (setsid) and whose parent is gone, when the daemon says stop (a lifeline byte).
TEST_F(SeatbeltHostile, SetsidChildDiesOnDown) {
  int lifeline[2];
  ASSERT_EQ(pipe(lifeline), 0);
  pid_t lockbox_pid = 0;
  const std::string script =
      "perl -MPOSIX -e 'if (fork() == 0) { POSIX::setsid(); if (fork() == 0) {"
      " open(my $f, \">\", \"" +
      a_ +
      "/child\"); print $f \"$$\\n\"; close($f); sleep 600 }"
      " exit 0 } sleep 600'";
  run_block(block_a(), script, lifeline[0], &lockbox_pid);
  close(lifeline[0]);
  std::string child;
  for (int i = 0; i < 200 && (child = read_file(a_ + "/child")).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(child.empty()) << "the escaping child never started";
  ASSERT_TRUE(alive(std::stoi(child)));
  ASSERT_EQ(write(lifeline[1], "k", 1), 1);  // what `stackie down` makes the daemon do
  int status = 0;
  waitpid(lockbox_pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL);
  EXPECT_FALSE(alive(std::stoi(child))) << "a setsid() grandchild outlived down";
  kill(std::stoi(child), SIGKILL);
  close(lifeline[1]);
}

}  // namespace
