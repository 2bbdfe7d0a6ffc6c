// The zygote's side of its protocol (sandbox/zygote_protocol.h), with monitors that are test
// functions instead of the lockbox: serve_zygote runs in a child of the test, which plays the
// daemon on the other end of its socket.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/linux_zygote.h"
#include "sandbox/zygote_protocol.h"

namespace stackie::linux_sandbox {
namespace {

using zygote::ReplyKind;
using zygote::ZygoteReply;

// A monitor as the test asks: argv is {"monitor", WHAT, CODE}. It writes one byte to its fd 3
// once it has done what it was asked, then waits for its end or returns CODE. Its fd 1 is a
// pipe of the test's, as a block's stdout is a pipe of the daemon's.
int test_monitor(int argc, char** argv) {
  if (argc != 3) return 100;
  const std::string what = argv[1];
  const int code = std::atoi(argv[2]);
  if (what == "report-then-wait") {
    report_sandbox_gone(code);
  } else if (what == "forge-then-wait") {
    // A report as another monitor: a generation no monitor of this zygote has.
    sigval value{};
    value.sival_int = zygote::gone_value(zygote::kGenerationMask, code);
    sigqueue(getppid(), zygote::gone_signal(), value);
  } else if (what != "exit") {
    return 101;
  }
  const char done = 'd';
  if (write(3, &done, 1) != 1) return 102;
  if (what == "exit") return code;
  for (;;) pause();
}

class ZygoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    zygote_ = fork();
    ASSERT_GE(zygote_, 0);
    if (zygote_ == 0) {
      close(pair[0]);
      if (dup2(pair[1], zygote::kSocketFd) < 0) _exit(120);
      _exit(serve_zygote(zygote::kSocketFd, test_monitor));
    }
    close(pair[1]);
    sock_ = pair[0];
  }
  void TearDown() override {
    if (sock_ >= 0) close(sock_);  // the zygote's end of file: it drops its spare and exits
    if (zygote_ > 0) {
      int status = 0;
      waitpid(zygote_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "zygote status " << status;
    }
  }

  struct Spawned {
    pid_t pid = -1;
    int pidfd = -1;
    int out = -1;   // the monitor's fd 1, read end
    int done = -1;  // the monitor's fd 3, read end
    ~Spawned() {
      for (int fd : {pidfd, out, done})
        if (fd >= 0) close(fd);
    }
  };

  // The kind of sandbox a request says it is for: a namespace monitor's (whose word that its
  // sandbox is gone the zygote takes), or nothing ahead (a landlock or cgroup monitor's).
  static constexpr uint32_t kNamespaces = zygote::kAheadNamespaces;
  static constexpr uint32_t kNothingAhead = 0;

  // Sends a spawn of test_monitor(WHAT, CODE) with pipes as its fds 1 and 3; the zygote's answer.
  std::unique_ptr<Spawned> spawn(const std::string& what, int code, uint32_t ahead) {
    const std::vector<std::string> args = {"monitor", what, std::to_string(code)};
    zygote::ZygoteRequest header;
    header.argc = static_cast<uint32_t>(args.size());
    header.fd_count = 4;
    header.ahead = ahead;
    std::string bytes(reinterpret_cast<const char*>(&header), sizeof header);
    for (const std::string& arg : args) bytes.append(arg).push_back('\0');
    int out[2], done[2];
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(done, O_CLOEXEC), 0);
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    const int fds[4] = {null, out[1], null, done[1]};
    EXPECT_EQ(zygote::send_datagram(sock_, bytes.data(), bytes.size(), fds, 4),
              static_cast<ssize_t>(bytes.size()));
    close(null);
    close(out[1]);
    close(done[1]);
    auto spawned = std::make_unique<Spawned>();
    spawned->out = out[0];
    spawned->done = done[0];
    int pidfd = -1;
    std::optional<ZygoteReply> reply = next_reply(&pidfd);
    if (!reply || reply->kind != ReplyKind::spawned) {
      ADD_FAILURE() << "no spawned answer; instead "
                    << (reply ? "kind " + std::to_string(static_cast<int>(reply->kind)) +
                                    " for pid " + std::to_string(reply->pid)
                              : std::string("nothing"));
      return spawned;
    }
    spawned->pid = reply->pid;
    spawned->pidfd = pidfd;
    return spawned;
  }

  // The zygote's next message, within 10 s (none: a failure of the caller's expectation).
  std::optional<ZygoteReply> next_reply(int* fd = nullptr) {
    pollfd ready{sock_, POLLIN, 0};
    if (poll(&ready, 1, 10000) != 1) return std::nullopt;
    ZygoteReply reply;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    iovec io{&reply, sizeof reply};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    if (recvmsg(sock_, &message, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof reply))
      return std::nullopt;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int received;
      std::memcpy(&received, CMSG_DATA(c), sizeof received);
      if (fd != nullptr)
        *fd = received;
      else
        close(received);
    }
    return reply;
  }

  // The next `exited` message, skipping those of spares the test never asked for.
  std::optional<ZygoteReply> next_exit(const std::vector<pid_t>& ours) {
    for (;;) {
      std::optional<ZygoteReply> reply = next_reply();
      if (!reply) return std::nullopt;
      if (reply->kind == ReplyKind::exited &&
          std::find(ours.begin(), ours.end(), reply->pid) != ours.end())
        return reply;
    }
  }

  static bool wait_for_byte(int fd) {
    pollfd ready{fd, POLLIN, 0};
    char byte;
    return poll(&ready, 1, 10000) == 1 && read(fd, &byte, 1) == 1;
  }
  // Whether every writer of the pipe `fd` has let go of it (nothing in it).
  static bool at_end(int fd) {
    pollfd ready{fd, POLLIN, 0};
    char byte;
    return poll(&ready, 1, 0) == 1 && read(fd, &byte, 1) == 0;
  }
  static bool has_exited(int pidfd) {
    pollfd ready{pidfd, POLLIN, 0};
    return poll(&ready, 1, 0) == 1;
  }
  static void kill_and_wait(int pidfd) {
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    pollfd ready{pidfd, POLLIN, 0};
    poll(&ready, 1, 10000);
  }

  void expect_report_not_taken(const std::string& what, uint32_t ahead);

  pid_t zygote_ = -1;
  int sock_ = -1;
};

// A monitor whose sandbox is gone says so, and the daemon is told `exited` with its code while
// the monitor itself has not exited yet (here it never would on its own), having let go of the
// block's stdout first. Its later exit is not reported a second time.
TEST_F(ZygoteTest, AMonitorsWordThatItsSandboxIsGoneIsAnsweredBeforeItExits) {
  auto first = spawn("report-then-wait", 7, kNamespaces);
  ASSERT_GT(first->pid, 0);
  std::optional<ZygoteReply> exited = next_exit({first->pid});
  ASSERT_TRUE(exited) << "no exited message while the monitor lives on after its report";
  EXPECT_TRUE(WIFEXITED(exited->value) && WEXITSTATUS(exited->value) == 7) << exited->value;
  EXPECT_FALSE(has_exited(first->pidfd)) << "the report came only with the monitor's exit";
  EXPECT_TRUE(at_end(first->out)) << "the monitor still held the block's stdout when it reported";

  kill_and_wait(first->pidfd);
  // Killed after its report: the zygote reaps it without a word. Any such word would come
  // before the answers to the next spawn (the zygote reads its children's ends first).
  auto second = spawn("exit", 3, kNamespaces);
  ASSERT_GT(second->pid, 0);
  std::optional<ZygoteReply> next = next_exit({first->pid, second->pid});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->pid, second->pid) << "the first monitor's end was reported twice";
  EXPECT_TRUE(WIFEXITED(next->value) && WEXITSTATUS(next->value) == 3) << next->value;
}

// A monitor that sent a report which must not be taken, killed once its signal is queued: its
// end is reported when it is reaped, as the SIGKILL it was, not as the report said.
void ZygoteTest::expect_report_not_taken(const std::string& what, uint32_t ahead) {
  auto monitor = spawn(what, 9, ahead);
  ASSERT_GT(monitor->pid, 0);
  ASSERT_TRUE(wait_for_byte(monitor->done)) << "the monitor did not run";
  kill_and_wait(monitor->pidfd);
  std::optional<ZygoteReply> exited = next_exit({monitor->pid});
  ASSERT_TRUE(exited);
  EXPECT_TRUE(WIFSIGNALED(exited->value) && WTERMSIG(exited->value) == SIGKILL)
      << "the report was taken: status " << exited->value;
}

// A report that does not carry the generation its monitor was forked as.
TEST_F(ZygoteTest, AReportAsAnotherMonitorIsNotTaken) {
  expect_report_not_taken("forge-then-wait", kNamespaces);
}

// The word of a monitor whose request asked for no namespaces (the landlock lockbox's, whose
// blocks share the zygote's pid namespace and could send one; a block with a cgroup).
TEST_F(ZygoteTest, AReportForAMonitorOfNoNamespacesIsNotTaken) {
  expect_report_not_taken("report-then-wait", kNothingAhead);
}

// A monitor that ends without a report (another backend, or a failure before any sandbox) is
// reported when reaped, as always.
TEST_F(ZygoteTest, AMonitorWithoutAReportIsReportedWhenReaped) {
  auto plain = spawn("exit", 5, kNamespaces);
  ASSERT_GT(plain->pid, 0);
  std::optional<ZygoteReply> exited = next_exit({plain->pid});
  ASSERT_TRUE(exited);
  EXPECT_TRUE(WIFEXITED(exited->value) && WEXITSTATUS(exited->value) == 5) << exited->value;
}

}  // namespace
}  // namespace stackie::linux_sandbox
