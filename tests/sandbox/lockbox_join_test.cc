// `stackie-lockbox --join` against hostile blocks (issue 14): the joiner's memory is never
// open to the block, `network: host` sandboxes can be joined, a sandbox of another name is
// refused, the caller's own terminal is refused, and a terminal made for CMD becomes its
// controlling terminal.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "lockbox_harness.h"

extern char** environ;

namespace stackie::testing {
namespace {

class LockboxJoin : public ::testing::Test {
 protected:
  void SetUp() override { STACKIE_REQUIRE_UNPRIVILEGED(); }
};

int count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  while (std::getline(lines, line))
    if (line.rfind(prefix, 0) == 0) ++n;
  return n;
}

// The block races every process entering its pid namespace for a writable /proc/N/mem while
// it still runs the lockbox. Before the fix the joiner's child shared the joiner's memory
// (CLONE_VM|CLONE_VFORK) and was open to the block between its capset and execve: the racer
// won several times in 100 joins.
TEST_F(LockboxJoin, TheBlockNeverWritesTheJoinersMemory) {
  Background racer({"mem-racer"});
  ASSERT_TRUE(racer.wait_for("ready"));
  constexpr int kJoins = 100;
  for (int i = 0; i < kJoins; ++i) {
    RunResult r = run({lockbox_path(), "--join", std::to_string(racer.pid()), "--", "/bin/true"});
    ASSERT_EQ(r.exit_code, 0) << "join " << i << ": " << r.err;
  }
  // The racer reports each pid it raced; the last join's must be in before we judge.
  racer.wait_for("saw " + std::to_string(kJoins + 2), 3000);
  const std::string& out = racer.output();
  EXPECT_EQ(count_lines_starting(out, "WON"), 0) << out;
  // It was really racing: it saw (nearly) every joiner's child enter.
  EXPECT_GE(count_lines_starting(out, "saw") + count_lines_starting(out, "WON"), kJoins / 2) << out;
}

std::string status_field(pid_t pid, const std::string& name) {
  std::string text;
  int fd = open(("/proc/" + std::to_string(pid) + "/status").c_str(), O_RDONLY | O_CLOEXEC);
  char buffer[4096];
  ssize_t n;
  while (fd >= 0 && (n = read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<size_t>(n));
  if (fd >= 0) close(fd);
  size_t at = text.find("\n" + name + ":\t");
  if (at == std::string::npos) return "";
  at += name.size() + 3;
  return text.substr(at, text.find('\n', at) - at);
}

// While CMD runs, the joiner (outside the pid namespace, inside the block's user namespace)
// holds no capability, has no_new_privs, and is not dumpable (its /proc files belong to root):
// nothing in the block could use it. Before the fix it kept every capability of the block's
// user namespace and was dumpable.
TEST_F(LockboxJoin, TheJoinerHoldsNothingWhileCmdRuns) {
  Background box({"sleep", "30"});
  ASSERT_TRUE(box.wait_for("ready"));
  std::string pid = std::to_string(box.pid());
  const char* argv[] = {lockbox_path().c_str(), "--join", pid.c_str(), "--",
                        "/bin/sleep",           "5",      nullptr};
  std::string lockbox = lockbox_path();
  argv[0] = lockbox.c_str();
  pid_t joiner = -1;
  ASSERT_EQ(posix_spawn(&joiner, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  // CMD started (the joiner has a child) and the joiner dropped what it held right after.
  std::string children =
      "/proc/" + std::to_string(joiner) + "/task/" + std::to_string(joiner) + "/children";
  bool started = false;
  for (int i = 0; i < 500 && !started; ++i) {
    int fd = open(children.c_str(), O_RDONLY | O_CLOEXEC);
    char c = 0;
    started = fd >= 0 && read(fd, &c, 1) == 1;
    if (fd >= 0) close(fd);
    if (!started) usleep(10000);
  }
  // (Landlock: CapEff is 0 from the start; no_new_privs comes right after the fork.)
  for (int i = 0; i < 100 && (status_field(joiner, "CapEff") != "0000000000000000" ||
                              status_field(joiner, "NoNewPrivs") != "1");
       ++i)
    usleep(10000);
  EXPECT_TRUE(started);
  EXPECT_EQ(status_field(joiner, "CapEff"), "0000000000000000");
  EXPECT_EQ(status_field(joiner, "CapPrm"), "0000000000000000");
  // Landlock: the joiner is an ordinary process of the host's user namespace, whose bounding
  // set cannot shrink; no_new_privs keeps execve from granting any of it.
  if (!landlock_backend()) {
    EXPECT_EQ(status_field(joiner, "CapBnd"), "0000000000000000");
  }
  EXPECT_EQ(status_field(joiner, "NoNewPrivs"), "1");
  struct stat st {};
  // (/proc/PID itself always shows the owner; the files in it show root for a non-dumpable mm.)
  ASSERT_EQ(stat(("/proc/" + std::to_string(joiner) + "/fd").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the joiner is dumpable (its /proc/PID/fd is its owner's)";
  kill(joiner, SIGKILL);
  waitpid(joiner, nullptr, 0);
}

// A `network: host` sandbox has no network namespace of its own: the join must not try to
// enter the host's (which its user namespace does not own: setns failed with EPERM before).
TEST_F(LockboxJoin, NetworkHostSandboxCanBeJoined) {
  Background box({"sleep", "30"}, {"--net", "host"});
  ASSERT_TRUE(box.wait_for("ready"));
  RunResult r = run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/sh", "-c",
                     "echo joined; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "joined\n");
  STACKIE_SKIP_UNDER_LANDLOCK("no pid namespace to join: the joined command sees the host's pids");
  // Still every other namespace: the pid namespace is the sandbox's.
  RunResult pids = run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/sh", "-c",
                        "ls /proc | grep -c '^[0-9]'"});
  EXPECT_EQ(pids.exit_code, 0) << pids.err;
  EXPECT_LE(std::atoi(pids.out.c_str()), 5) << pids.out;
}

// --name: the daemon's pid may have been recycled by another sandbox of the user's before the
// lockbox ran; the join checks the sandbox's name (its hostname) before running anything.
TEST_F(LockboxJoin, ASandboxOfAnotherNameIsRefused) {
  Background box({"sleep", "30"}, {"--name", "shop-api"});
  ASSERT_TRUE(box.wait_for("ready"));
  std::string pid = std::to_string(box.pid());
  RunResult wrong =
      run({lockbox_path(), "--join", pid, "--name", "shop-db", "--", "/bin/echo", "ran"});
  EXPECT_EQ(wrong.exit_code, 125) << wrong.err;
  EXPECT_NE(wrong.err.find("is sandbox 'shop-api', not 'shop-db'"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.out, "");
  RunResult right =
      run({lockbox_path(), "--join", pid, "--name", "shop-api", "--", "/bin/echo", "ran"});
  EXPECT_EQ(right.exit_code, 0) << right.err;
  EXPECT_EQ(right.out, "ran\n");
}

struct Pty {
  int master = -1;
  std::string slave_name;
  Pty() {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0) slave_name = ptsname(master);
  }
  ~Pty() {
    if (master >= 0) close(master);
  }
  // Everything the other side wrote until it closed (EIO) or `timeout_ms` of silence.
  std::string read_all(int timeout_ms = 5000) {
    std::string out;
    for (;;) {
      pollfd p{master, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return out;
      char buffer[512];
      ssize_t n = read(master, buffer, sizeof buffer);
      if (n <= 0) return out;
      out.append(buffer, static_cast<size_t>(n));
    }
  }
};

// Runs argv in a new session whose controlling terminal is the pty's slave (as a shell in a
// terminal would), fds 0-2 on it. Returns the exit code.
int run_on_terminal(Pty& pty, const std::vector<std::string>& argv, bool make_controlling,
                    std::string* output) {
  pid_t child = fork();
  if (child == 0) {
    setsid();
    int slave = open(pty.slave_name.c_str(), O_RDWR | (make_controlling ? 0 : O_NOCTTY));
    if (slave < 0) _exit(90);
    for (int fd = 0; fd < 3; ++fd) dup2(slave, fd);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(91);
  }
  *output = pty.read_all();
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// fds 0-2 go to CMD inside the sandbox: the caller's own terminal there let the block type
// into the caller's shell. Before the fix the join ran CMD on it.
TEST_F(LockboxJoin, TheCallersOwnTerminalIsRefused) {
  Background box({"sleep", "30"});
  ASSERT_TRUE(box.wait_for("ready"));
  Pty pty;
  ASSERT_FALSE(pty.slave_name.empty());
  std::string out;
  int code = run_on_terminal(
      pty, {lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/echo", "ran"},
      /*make_controlling=*/true, &out);
  EXPECT_EQ(code, 125) << out;
  EXPECT_NE(out.find("is the caller's terminal"), std::string::npos) << out;
  EXPECT_EQ(out.find("ran"), std::string::npos) << out;
  // The same terminal handed to a lockbox in a session of its own (`setsid stackie-lockbox`).
  std::string script = "exec setsid -w '" + lockbox_path() + "' --join " +
                       std::to_string(box.pid()) + " -- /bin/echo ran";
  Pty second;  // a pty whose slave every holder closed reads EIO until it is reopened
  code = run_on_terminal(second, {"/bin/sh", "-c", script}, /*make_controlling=*/true, &out);
  EXPECT_EQ(code, 125) << out;
  EXPECT_NE(out.find("is the caller's terminal"), std::string::npos) << out;
  EXPECT_EQ(out.find("ran"), std::string::npos) << out;
}

// A terminal made for CMD (stackie exec's pty: nobody's controlling terminal) becomes CMD's
// controlling terminal, so ^C typed into it reaches CMD's foreground job.
TEST_F(LockboxJoin, AFreshTerminalBecomesCmdsControllingTerminal) {
  Background box({"sleep", "30"});
  ASSERT_TRUE(box.wait_for("ready"));
  Pty pty;
  ASSERT_FALSE(pty.slave_name.empty());
  std::string out;
  int code = run_on_terminal(
      pty, {lockbox_path(), "--join", std::to_string(box.pid()), "--", probe_inside(), "session"},
      /*make_controlling=*/false, &out);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("leader tty"), std::string::npos) << out;
}

}  // namespace
}  // namespace stackie::testing
