// Host-port allocation and the forwarder's relays on the daemon's own network (no sandbox):
// the sandboxed paths are covered end to end by tests/e2e/network_test.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/posix_io.h"
#include "sandbox/net_channel_protocol.h"
#include "spawn/net_channel.h"
#include "supervisor/egress_proxy.h"
#include "supervisor/host_ports.h"
#include "supervisor/port_forward.h"
#include "supervisor/port_memory.h"
#include "support/temp_dir.h"

namespace stackie {
namespace {

// A listener on 127.0.0.1 (port 0: any), closed with the object.
class Listener {
 public:
  explicit Listener(int port = 0) {
    fd_ = stackie::socket_cloexec(AF_INET, SOCK_STREAM);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && listen(fd_, 16) == 0 &&
          getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { close(fd_); }
  bool ok() const { return ok_; }
  int port() const { return port_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
};

HostPortRequest request_for(int port, bool exact) {
  return HostPortRequest{"shop", "stackie.postgres", "postgres", port, exact, "/w"};
}

TEST(HostPorts, AFreeDeclaredPortIsTakenAsIs) {
  int port;
  {
    Listener probe;
    port = probe.port();
  }
  auto allocated = allocate_host_port(request_for(port, false), {});
  ASSERT_TRUE(allocated.ok()) << allocated.error().message;
  EXPECT_EQ(*allocated, port);
}

TEST(HostPorts, ATakenPortMovesToTheNextFreeOne) {
  Listener taken;
  ASSERT_TRUE(taken.ok());
  auto allocated = allocate_host_port(request_for(taken.port(), false), {});
  ASSERT_TRUE(allocated.ok()) << allocated.error().message;
  EXPECT_GT(*allocated, taken.port());
  EXPECT_TRUE(host_port_free(*allocated));
}

TEST(HostPorts, ExactRequestsNameTheProcessHoldingThePort) {
  Listener taken;
  ASSERT_TRUE(taken.ok());
  auto allocated = allocate_host_port(request_for(taken.port(), true), {});
  ASSERT_FALSE(allocated.ok());
  std::string expected = "host port " + std::to_string(taken.port()) +
                         " for 'stackie.postgres' (serves.postgres) is in use by pid " +
                         std::to_string(getpid()) + " (";
  EXPECT_EQ(allocated.error().message.rfind(expected, 0), 0u) << allocated.error().message;
}

TEST(HostPorts, PortsOfTheDaemonsBlocksAreNamedOrKept) {
  Listener held;  // as the forwarder would hold it
  ASSERT_TRUE(held.ok());
  BlockStatus running;
  running.stack = "shop";
  running.block = "stackie.postgres";
  running.serves = {ServedPort{"postgres", "postgres", 5432, held.port()}};
  // The same block and port name: a re-applied stack keeps its port.
  auto same = allocate_host_port(request_for(held.port(), true), {running});
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_EQ(*same, held.port());
  // Another stack's block: named, and skipped when not exact.
  running.stack = "other";
  auto exact = allocate_host_port(request_for(held.port(), true), {running});
  ASSERT_FALSE(exact.ok());
  EXPECT_NE(exact.error().message.find("in use by block 'stackie.postgres' (serves.postgres) of "
                                       "stack 'other'"),
            std::string::npos)
      << exact.error().message;
  auto moved = allocate_host_port(request_for(held.port(), false), {running});
  ASSERT_TRUE(moved.ok());
  EXPECT_NE(*moved, held.port());
}

// ---- relays on the loop ----------------------------------------------------------------------

// The daemon's half of the net channel: a burst of requests far past what may be on the wire
// at once is answered in order, never more than kInFlight (32) outstanding at the monitor, and
// what is pending when the channel closes is cancelled. The monitor here answers request i
// (from 1) with the error number i, so the order shows in the codes.
TEST(NetChannelQueue, ABurstIsAnsweredInOrderAndTheRestCancelledOnClose) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  constexpr int kBurst = 200;
  std::atomic<int> most_outstanding{0};
  std::thread monitor([fd = pair[1], &most_outstanding] {
    int received = 0, answered = 0;
    while (answered < kBurst) {
      char request = 0;
      // Take what has arrived, then answer one: the daemon must keep within its window.
      while (recv(fd, &request, 1, received > answered ? MSG_DONTWAIT : 0) == 1) ++received;
      most_outstanding = std::max(most_outstanding.load(), received - answered);
      std::string reply = std::string(1, stackie::net_channel::kError) + std::to_string(++answered);
      if (send(fd, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) return;
    }
  });
  auto channel = stackie::spawn_detail::NetChannel::open(&loop, pair[0], nullptr);
  ASSERT_TRUE(channel.ok()) << channel.error().message;
  std::vector<int> codes;
  for (int i = 0; i < kBurst; ++i)
    (*channel)->request_socket(
        [&codes](stackie::Result<int> got) { codes.push_back(got.ok() ? 0 : -got.error().code); });
  for (int i = 0; i < 20000 && codes.size() < size_t(kBurst); ++i) {
    uv_run(&loop, UV_RUN_NOWAIT);
    usleep(500);
  }
  monitor.join();
  std::vector<int> wanted(kBurst);
  for (int i = 0; i < kBurst; ++i) wanted[size_t(i)] = i + 1;
  EXPECT_EQ(codes, wanted) << "every request answered, in order";
  EXPECT_LE(most_outstanding.load(), 32) << "never more than kInFlight on the wire";
  EXPECT_GT(most_outstanding.load(), 1) << "requests did go out together";

  std::vector<int> cancelled;
  for (int i = 0; i < 40; ++i)  // 32 sent, 8 waiting: none answered
    (*channel)->request_socket([&cancelled](stackie::Result<int> got) {
      cancelled.push_back(got.ok() ? 0 : got.error().code);
    });
  uv_run(&loop, UV_RUN_NOWAIT);
  (*channel)->close();
  EXPECT_EQ(cancelled, std::vector<int>(40, UV_ECANCELED));
  uv_run(&loop, UV_RUN_DEFAULT);
  close(pair[1]);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// Runs the loop until `done` or 10 s; the client side runs on a thread with blocking sockets.
void run_until(uv_loop_t* loop, const std::atomic<bool>& done) {
  for (int i = 0; i < 10000 && !done; ++i) {
    uv_run(loop, UV_RUN_NOWAIT);
    usleep(1000);
  }
}

int connect_to(int port) {
  int fd = stackie::socket_cloexec(AF_INET, SOCK_STREAM);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class ForwardLoop : public ::testing::Test {
 protected:
  void SetUp() override { uv_loop_init(&loop_); }
  void TearDown() override {
    forward_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle outlived the test";
  }
  uv_loop_t loop_{};
  std::unique_ptr<PortForward> forward_;
};

TEST_F(ForwardLoop, BytesAndHalfCloseCrossTheRelay) {
  Listener upstream;
  ASSERT_TRUE(upstream.ok());
  auto forward = PortForward::listen_host(&loop_, 0, [&]() -> Result<Upstream> {
    return Upstream{{}, upstream.port()};
  });
  ASSERT_TRUE(forward.ok()) << forward.error().message;
  forward_ = std::move(*forward);
  std::atomic<bool> done{false};
  std::string server_got, client_got;
  std::thread peers([&] {
    int client = connect_to(forward_->port());
    int server = accept(upstream.fd(), nullptr, nullptr);
    (void)!write(client, "hello", 5);
    shutdown(client, SHUT_WR);  // half-close: the server must see EOF after "hello"
    char buf[64];
    ssize_t n;
    while ((n = read(server, buf, sizeof buf)) > 0) server_got.append(buf, size_t(n));
    (void)!write(server, "bye", 3);
    close(server);
    while ((n = read(client, buf, sizeof buf)) > 0) client_got.append(buf, size_t(n));
    close(client);
    done = true;
  });
  run_until(&loop_, done);
  peers.join();
  EXPECT_EQ(server_got, "hello");
  EXPECT_EQ(client_got, "bye");
}

TEST_F(ForwardLoop, AnUpstreamThatCannotBeHadResetsTheClient) {
  auto forward = PortForward::listen_host(&loop_, 0, []() -> Result<Upstream> {
    Upstream upstream;
    upstream.port = 1;
    upstream.source = [](SocketDone done) { done(Error{UV_ECONNREFUSED, "gone"}); };
    return upstream;
  });
  ASSERT_TRUE(forward.ok()) << forward.error().message;
  forward_ = std::move(*forward);
  std::atomic<bool> done{false};
  int read_errno = 0;
  ssize_t read_result = 0;
  std::thread client([&] {
    int fd = connect_to(forward_->port());
    char buf[8];
    read_result = read(fd, buf, sizeof buf);
    read_errno = errno;
    close(fd);
    done = true;
  });
  run_until(&loop_, done);
  client.join();
  EXPECT_EQ(read_result, -1);  // not 0: a clean EOF would hide the failure
  EXPECT_EQ(read_errno, ECONNRESET);
}

TEST(EgressAllowlist, PatternsMatchHostAndPort) {
  EXPECT_TRUE(EgressProxy::allowed({}, "anything.example:1"));
  std::vector<std::string> allow = {"*.stripe.com:443", "127.0.0.1:8025"};
  EXPECT_TRUE(EgressProxy::allowed(allow, "api.stripe.com:443"));
  EXPECT_FALSE(EgressProxy::allowed(allow, "api.stripe.com:80"));
  EXPECT_FALSE(EgressProxy::allowed(allow, "stripe.com.evil.example:443"));
  EXPECT_TRUE(EgressProxy::allowed(allow, "127.0.0.1:8025"));
  EXPECT_FALSE(EgressProxy::allowed(allow, "127.0.0.1:80251"));
}

// Ports that stay put: a remembered port is asked for again even once the declared one is free.
TEST(PortMemory, ARememberedPortIsAskedForAgainAndSaysWhy) {
  testing::TempDir dir;
  int free_port = 0;
  {
    uv_loop_t loop;
    uv_loop_init(&loop);
    auto probe = PortForward::listen_host(&loop, 0, [] { return Result<Upstream>(Upstream{}); });
    ASSERT_TRUE(probe.ok());
    free_port = (*probe)->port();
    probe->reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  ResolvedStack stack;
  stack.name = "shop";
  stack.file = dir.path() + "/stackie-stack.yml";
  ResolvedBlock db;
  db.name = "stackie.postgres";
  db.serves = {ServedPort{"postgres", "postgres", 5432, free_port}};
  db.moved_ports = {MovedPort{"postgres", 5432, free_port, "taken"}};
  stack.blocks = {db};
  {
    PortMemory memory(dir.path() + "/ports.json");
    memory.remember(stack);
  }
  PortMemory memory(dir.path() + "/ports.json");  // read back from the file
  HostPortRequest request{"shop", "stackie.postgres", "postgres", 5432, false, dir.path()};
  EXPECT_EQ(memory.recall(request), free_port);
  auto grant = choose_host_port(request, {}, &memory);
  ASSERT_TRUE(grant.ok()) << grant.error().message;
  EXPECT_EQ(grant->port, free_port);
  EXPECT_NE(grant->note.find("using " + std::to_string(free_port)), std::string::npos)
      << grant->note;
  // Another project directory, or a changed declaration, starts afresh.
  HostPortRequest elsewhere = request;
  elsewhere.project_dir = "/somewhere/else";
  EXPECT_EQ(memory.recall(elsewhere), 0);
  HostPortRequest redeclared = request;
  redeclared.wanted = 5500;
  EXPECT_EQ(memory.recall(redeclared), 0);
}

}  // namespace
}  // namespace stackie
