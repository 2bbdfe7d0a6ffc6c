// The hand-over to a pid 1 forked ahead (sandbox/linux_init_ahead.h): what the monitor sends is
// what pid 1 gets, its fds at the numbers the monitor had them, nothing else of either open; a
// pid 1 that is gone is an error for the monitor; a hand-over that breaks off or does not parse
// gives pid 1 nothing, with no fd left behind.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/policy.h"
#include "sandbox/linux_init_ahead.h"
#include "sandbox/lockbox_input.h"
#include "sandbox/zygote_protocol.h"

namespace stackie::linux_sandbox {
namespace {

// A memfd that holds `text`, at fd `at` (-1: wherever it lands).
int file_holding(const std::string& text, int at = -1) {
  int fd = memfd_create("init-ahead-test", MFD_CLOEXEC);
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return -1;
  if (at < 0 || at == fd) return fd;
  if (dup2(fd, at) < 0) return -1;
  close(fd);
  return at;
}

std::string contents(int fd) {
  char buffer[64];
  ssize_t n = pread(fd, buffer, sizeof buffer, 0);
  return n < 0 ? "(" + std::string(std::strerror(errno)) + ")" : std::string(buffer, n);
}

std::vector<int> open_fds() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (entry->d_name[0] != '.' && fd != own) fds.push_back(fd);
  }
  closedir(dir);
  return fds;
}

// Closes every fd but those in `keep`.
void close_all_but(const std::vector<int>& keep) {
  for (int fd : open_fds())
    if (std::find(keep.begin(), keep.end(), fd) == keep.end()) close(fd);
}

// In pid 1's place: what it received, as one line (its socket and `report` left out).
std::string describe(const LaunchRequest& request, int sock, int report) {
  std::string seen = "command=";
  for (const std::string& arg : request.command) seen += "[" + arg + "]";
  seen += " name=" + request.policy.name + " env=";
  for (const auto& [name, value] : request.policy.environment) seen += name + "=" + value + ";";
  seen += " pass=";
  for (int fd : request.policy.pass_fds) seen += std::to_string(fd) + ",";
  seen += " error_fd=" + std::to_string(request.sink.error_fd) + " fds=";
  for (int fd : open_fds()) {
    if (fd == sock || fd == report) continue;
    seen += std::to_string(fd) + ":" + contents(fd);
    if (fcntl(fd, F_GETFD) & FD_CLOEXEC) seen += "(cloexec)";
    seen += ",";
  }
  return seen;
}

TEST(InitAhead, PidOneGetsTheRequestWithItsFdsAtTheMonitorsNumbers) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  int report[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  // pid 1: its socket at 5, one of the numbers its fds are to take (so it must move first),
  // and nothing else open but the test's report pipe, far above.
  const pid_t init = fork();
  ASSERT_GE(init, 0);
  if (init == 0) {
    if (dup2(report[1], 40) < 0 || dup2(pair[1], 5) < 0) _exit(10);
    fcntl(40, F_SETFD, FD_CLOEXEC);
    close_all_but({5, 40});
    int sock = 5;
    auto request = receive_hand_over(&sock);
    const std::string seen =
        request ? describe(*request, sock, 40) + (sock > 9 ? " sock-above" : " sock-below")
                : "nothing";
    _exit(write(40, seen.data(), seen.size()) == static_cast<ssize_t>(seen.size()) ? 0 : 11);
  }
  // The monitor: its stdio, the error fd 7 (close-on-exec, as the lockbox keeps it) and the
  // passed fds 5 and 9, each a file that says which it is.
  const pid_t monitor = fork();
  ASSERT_GE(monitor, 0);
  if (monitor == 0) {
    const int sock = fcntl(pair[0], F_DUPFD_CLOEXEC, 30);
    close_all_but({sock});
    for (auto [fd, text] : std::vector<std::pair<int, std::string>>{
             {0, "zero"}, {1, "one"}, {2, "two"}, {5, "five"}, {7, "seven"}, {9, "nine"}})
      if (file_holding(text, fd) != fd) _exit(20);
    fcntl(0, F_SETFD, 0);
    fcntl(1, F_SETFD, 0);
    fcntl(2, F_SETFD, 0);
    fcntl(5, F_SETFD, 0);
    fcntl(9, F_SETFD, 0);
    LaunchRequest request;
    request.command = {"/bin/echo", "two words", ""};
    request.policy.name = "s-block";
    request.policy.environment = {{"A", "1"}, {"B", "x y"}};
    request.policy.pass_fds = {5, 9};
    request.sink.error_fd = 7;
    _exit(hand_over(InitAhead{init, sock}, request) ? 21 : 0);
  }
  close(pair[0]);
  close(pair[1]);
  close(report[1]);
  int status = 0;
  ASSERT_EQ(waitpid(monitor, &status, 0), monitor);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "monitor status " << status;
  ASSERT_EQ(waitpid(init, &status, 0), init);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "pid 1 status " << status;
  std::string seen(4096, '\0');
  ssize_t n = read(report[0], seen.data(), seen.size());
  close(report[0]);
  seen.resize(n > 0 ? static_cast<size_t>(n) : 0);
  EXPECT_EQ(seen,
            "command=[/bin/echo][two words][] name=s-block env=A=1;B=x y; pass=5,9, error_fd=7 "
            "fds=0:zero,1:one,2:two,5:five,7:seven(cloexec),9:nine, "
            "sock-above");
}

TEST(InitAhead, APidOneThatIsGoneIsTheMonitorsError) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  close(pair[1]);
  int report[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  // In a child whose stdio is surely open (the monitor's always is; the test runner's may not).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (int fd = 0; fd <= 2; ++fd)
      if (fcntl(fd, F_GETFD) < 0) open("/dev/null", O_RDWR);
    LaunchRequest request;
    request.command = {"/bin/true"};
    auto error = hand_over(InitAhead{1, pair[0]}, request);
    const std::string said =
        error ? std::to_string(error->errnum) + " " + error->message : std::string("sent");
    _exit(write(report[1], said.data(), said.size()) > 0 ? 0 : 1);
  }
  close(pair[0]);
  close(report[1]);
  std::string said(512, '\0');
  ssize_t n = read(report[0], said.data(), said.size());
  said.resize(n > 0 ? static_cast<size_t>(n) : 0);
  close(report[0]);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(said.substr(0, said.find(' ')), std::to_string(EPIPE)) << said;
  EXPECT_NE(said.find("it is gone"), std::string::npos) << said;
}

TEST(InitAhead, TheMonitorsOwnSocketIsNeverHandedOn) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  LaunchRequest request;
  request.command = {"/bin/true"};
  request.policy.pass_fds = {pair[0]};
  auto error = hand_over(InitAhead{1, pair[0]}, request);
  EXPECT_TRUE(error.has_value());
  char byte;
  EXPECT_EQ(recv(pair[1], &byte, 1, MSG_DONTWAIT), -1) << "something was sent";
  close(pair[0]);
  close(pair[1]);
}

// What pid 1 is sent when the monitor breaks off, or by anything but a monitor: nothing taken,
// and every fd that came with it closed. Each case in a child, as pid 1 is: nothing open but its
// socket (fork_init_ahead), so that what it is left with is seen whole.
TEST(InitAhead, ABrokenOffOrMalformedHandOverGivesPidOneNothing) {
  // Sends `bytes` with `fd_count` fds, then the end of file: what pid 1 made of it.
  auto receive_after = [](const std::string& bytes, int fd_count) -> std::string {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return "no socketpair";
    std::vector<int> passed;
    for (int i = 0; i < fd_count; ++i) passed.push_back(file_holding("passed"));
    if (!bytes.empty() &&
        zygote::send_datagram(pair[0], bytes.data(), bytes.size(), passed.data(), passed.size()) !=
            static_cast<ssize_t>(bytes.size()))
      return "not sent";
    for (int fd : passed) close(fd);
    close(pair[0]);  // the end of file
    const pid_t child = fork();
    if (child == 0) {
      close_all_but({pair[1]});
      int sock = pair[1];
      const bool taken = receive_hand_over(&sock).has_value();
      const std::vector<int> left = open_fds();
      _exit(taken ? 0 : left == std::vector<int>{sock} ? 1 : 2);
    }
    close(pair[1]);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return "crashed";
    switch (WEXITSTATUS(status)) {
      case 0: return "taken";
      case 1: return "refused";
      default: return "refused, with fds left open";
    }
  };
  auto header = [](uint32_t body, uint32_t fds) {
    const uint32_t words[3] = {0x31544e49, body, fds};
    return std::string(reinterpret_cast<const char*>(words), sizeof words);
  };
  // A body that parses: error fd -1, fds 0 1 2, one argument "x", the default policy.
  auto word = [](uint32_t value) {
    return std::string(reinterpret_cast<const char*>(&value), sizeof value);
  };
  const std::string policy = policy_to_json(SandboxPolicy{});
  const std::string head = word(0xffffffff) + word(0) + word(1) + word(2) + word(1) + word(1) + "x";
  const std::string body = head + word(static_cast<uint32_t>(policy.size())) + policy;
  const auto size = [](const std::string& text) { return static_cast<uint32_t>(text.size()); };
  ASSERT_EQ(receive_after(header(size(body), 3) + body, 3), "taken")
      << "the well-formed request the others are cut from";
  EXPECT_EQ(receive_after("", 0), "refused") << "the monitor closed without a request";
  EXPECT_EQ(receive_after("not a request at all", 3), "refused") << "no magic";
  EXPECT_EQ(receive_after(header(size(body), 3), 3), "refused") << "the body never came";
  EXPECT_EQ(receive_after(header(size(body), 3) + body.substr(0, 9), 3), "refused")
      << "a body cut short";
  EXPECT_EQ(receive_after(header(4, 3) + body.substr(0, 4), 3), "refused")
      << "a body that says too little";
  EXPECT_EQ(receive_after(header(0xffffffff, 3), 3), "refused") << "a body over the bound";
  EXPECT_EQ(receive_after(header(size(body), 3) + body, 2), "refused") << "fewer fds than said";
  const std::string bad_policy = head + word(8) + "not json";
  EXPECT_EQ(receive_after(header(size(bad_policy), 3) + bad_policy, 3), "refused")
      << "a policy that does not parse";
}

// The monitor's socket to its pid 1 is open in the monitor while the lockbox reads its options:
// no option may name it (read as a policy, it would be drained; passed on, given to the block).
TEST(InitAhead, NoOptionOfTheLockboxMayNameTheSocketToPidOne) {
  auto read_with_own = [](const std::string& option, bool own) {
    int policy[2];
    EXPECT_EQ(pipe2(policy, O_CLOEXEC), 0);
    const std::string json = policy_to_json(SandboxPolicy{});
    EXPECT_EQ(write(policy[1], json.data(), json.size()), static_cast<ssize_t>(json.size()));
    close(policy[1]);
    const std::string fd = std::to_string(policy[0]);
    std::vector<std::string> args = {"stackie-lockbox", option, fd, "--", "/bin/true"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    lockbox::Input input;
    if (own) input.own_fd = policy[0];
    testing::internal::CaptureStderr();  // the refusal's report
    auto done = lockbox::read_input(static_cast<int>(args.size()), argv.data(), input);
    const std::string said = testing::internal::GetCapturedStderr();
    if (fcntl(policy[0], F_GETFD) >= 0) close(policy[0]);
    return done ? "exit " + std::to_string(*done) + ": " + said : std::string("taken");
  };
  EXPECT_EQ(read_with_own("--policy-fd", false), "taken");
  EXPECT_EQ(read_with_own("--pass-fd", false), "taken");
  EXPECT_NE(read_with_own("--policy-fd", true).find("exit 125"), std::string::npos);
  EXPECT_NE(read_with_own("--pass-fd", true).find("exit 125"), std::string::npos);
  EXPECT_NE(read_with_own("--error-fd", true).find("exit 125"), std::string::npos);
  EXPECT_EQ(read_with_own("--net-fd", false), "taken");
  EXPECT_NE(read_with_own("--net-fd", true).find("exit 125"), std::string::npos);
  EXPECT_EQ(read_with_own("--cgroup-fd", false), "taken");
  EXPECT_NE(read_with_own("--cgroup-fd", true).find("exit 125"), std::string::npos);
}

}  // namespace
}  // namespace stackie::linux_sandbox
