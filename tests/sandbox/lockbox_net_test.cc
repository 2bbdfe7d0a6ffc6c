// The lockbox's net channel (src/sandbox/net_channel_protocol.h, DESIGN.md §6), driven by hand
// over a real socketpair: listeners made inside reach the caller before the block runs, and
// sockets made on request live in the sandbox's network namespace (they reach the block's
// port and nothing on the host).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lockbox_harness.h"

namespace stackie::testing {
namespace {

class LockboxNet : public ::testing::Test {
 protected:
  void SetUp() override {
    STACKIE_REQUIRE_UNPRIVILEGED();
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
    ours_ = fds[0];
    theirs_ = fds[1];
  }
  void TearDown() override {
    if (ours_ >= 0) close(ours_);
    if (theirs_ >= 0) close(theirs_);
  }
  std::vector<std::string> net_flags(const std::vector<int>& listen_ports) const {
    std::vector<std::string> flags = {"--net", "localhost", "--net-fd", std::to_string(theirs_)};
    for (int port : listen_ports) {
      flags.push_back("--listen");
      flags.push_back(std::to_string(port));
    }
    return flags;
  }
  RunOptions leaking_channel() const {
    RunOptions options;
    options.leak_fd = theirs_;
    return options;
  }

  int ours_ = -1;
  int theirs_ = -1;
};

// One message off the channel: its text and the fds it carried (-1 text on timeout).
struct Message {
  std::string text;
  std::vector<int> fds;
};

Message receive(int channel, int timeout_ms = 5000) {
  Message message;
  pollfd p{channel, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) != 1) {
    message.text = "(timeout)";
    return message;
  }
  char body[64] = {};
  iovec io{body, sizeof body - 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  msghdr header{};
  header.msg_iov = &io;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  ssize_t n = recvmsg(channel, &header, MSG_CMSG_CLOEXEC);
  if (n <= 0) {
    message.text = "(closed)";
    return message;
  }
  message.text.assign(body, static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* data = reinterpret_cast<const int*>(CMSG_DATA(c));
    message.fds.insert(message.fds.end(), data, data + count);
  }
  return message;
}

// A free port number on the host's loopback (the sandbox has its own, so any number works
// inside; this one is also known to be unused outside).
int unused_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int connect_fd(int fd, int port) {
  int flags = 0;  // the factory's sockets are non-blocking: connect and wait
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS)
    return errno;
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, 5000) != 1) return ETIMEDOUT;
  socklen_t len = sizeof flags;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &flags, &len);
  return flags;
}

std::string read_some(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1) return "(timeout)";
  char buf[64] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "(eof)";
}

TEST_F(LockboxNet, ListenersMadeInsideReachTheCallerBeforeTheBlockRuns) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no network namespace and no net channel (--net-fd is refused with exit 125, see "
      "AListenPortTakenTwiceIsASetupFailure): served ports are the host's, bound by the block");
  int port = unused_port();
  std::string served;
  std::thread caller([&] {
    Message listeners = receive(ours_);
    if (listeners.text != "L" || listeners.fds.size() != 1) {
      served = "message '" + listeners.text + "' with " + std::to_string(listeners.fds.size());
      return;
    }
    pollfd pending{listeners.fds[0], POLLIN, 0};  // the listener is non-blocking
    int client = poll(&pending, 1, 5000) == 1 ? accept(listeners.fds[0], nullptr, nullptr) : -1;
    served = read_some(client);
    if (write(client, "pong", 4) != 4) served = "write failed";
    close(client);
    close(listeners.fds[0]);
  });
  RunResult r =
      run_probe(net_flags({port}), {"talk-port", std::to_string(port)}, leaking_channel());
  caller.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trim(r.out), "pong");  // the block's connect to 127.0.0.1:PORT reached the caller
  EXPECT_EQ(served, "ping");
}

TEST_F(LockboxNet, SocketsMadeOnRequestLiveInTheSandboxNetwork) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no network namespace and no net channel (--net-fd is refused with exit 125, see "
      "AListenPortTakenTwiceIsASetupFailure): served ports are the host's, bound by the block");
  int port = unused_port();
  // A host listener on the same number: a socket of the host's network would reach it.
  int host = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(host, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(host, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(host, 4), 0);

  std::string reply;
  std::thread caller([&] {
    Message listeners = receive(ours_);  // 'L' with no fds comes first
    if (listeners.text != "L" || !listeners.fds.empty()) {
      reply = "first message '" + listeners.text + "'";
      return;
    }
    // The block listens on PORT inside soon; ask for fresh sockets until it does.
    for (int attempt = 0; attempt < 100; ++attempt) {
      char request = 'S';
      if (send(ours_, &request, 1, 0) != 1) break;
      Message socket = receive(ours_);
      if (socket.text != "S" || socket.fds.size() != 1) {
        reply = "reply '" + socket.text + "'";
        return;
      }
      int err = connect_fd(socket.fds[0], port);
      if (err == 0) {
        reply = read_some(socket.fds[0]);
        close(socket.fds[0]);
        return;
      }
      close(socket.fds[0]);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    reply = "never connected";
  });
  RunResult r = run_probe(net_flags({}), {"serve-port", std::to_string(port)}, leaking_channel());
  caller.join();
  close(host);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trim(r.out), "served");
  // "pong" comes only from the block; the host listener never answers (nor accepts).
  EXPECT_EQ(reply, "pong");
}

TEST_F(LockboxNet, UnknownRequestIsRefusedAndTheBlockRunsOn) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no network namespace and no net channel (--net-fd is refused with exit 125, see "
      "AListenPortTakenTwiceIsASetupFailure): served ports are the host's, bound by the block");
  std::string answer;
  std::thread caller([&] {
    receive(ours_);
    char request = 'X';
    send(ours_, &request, 1, 0);
    answer = receive(ours_).text;
  });
  RunResult r = run_probe(net_flags({}), {"sleep", "1"}, leaking_channel());
  caller.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(answer, "E" + std::to_string(EINVAL));
}

TEST_F(LockboxNet, AListenPortTakenTwiceIsASetupFailure) {
  int port = unused_port();
  RunResult r = run_probe(net_flags({port, port}), {"sleep", "0"}, leaking_channel());
  EXPECT_EQ(r.exit_code, 125);
  if (landlock_backend()) {  // every --net-fd is refused before the block runs
    EXPECT_NE(r.err.find("--net-fd needs a network namespace"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    return;
  }
  EXPECT_NE(r.err.find("listen on 127.0.0.1:" + std::to_string(port)), std::string::npos) << r.err;
}

TEST_F(LockboxNet, HostNetworkHasNoNamespaceToServe) {
  RunResult r = run_probe({"--net", "host", "--net-fd", std::to_string(theirs_)}, {"sleep", "0"},
                          leaking_channel());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("--net-fd needs a network namespace"), std::string::npos) << r.err;
}

TEST_F(LockboxNet, ListenWithoutChannelIsAUsageError) {
  RunResult r = run_probe({"--net", "localhost", "--listen", "5432"}, {"sleep", "0"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("--listen needs --net-fd"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace stackie::testing
