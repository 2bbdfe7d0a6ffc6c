// sd_notify's datagram protocol against real AF_UNIX datagram sockets (a path and an abstract
// "@" address), and the parsing of socket activation's LISTEN_* variables.
#include "supervisor/service_manager.h"
#include "base/posix_io.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/temp_dir.h"

namespace stackie {
namespace {

// A datagram socket bound to `address` (a path or "@abstract"), as the service manager's.
class NotifyListener {
 public:
  explicit NotifyListener(const std::string& address) {
    fd_ = stackie::socket_cloexec(AF_UNIX, SOCK_DGRAM);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, address.data(), address.size());
    if (address[0] == '@') addr.sun_path[0] = '\0';
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr),
                    static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size())) == 0;
    timeval timeout{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~NotifyListener() { ::close(fd_); }
  bool bound() const { return bound_; }
  std::string receive() {
    char buffer[512];
    ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    return n < 0 ? "<nothing>" : std::string(buffer, static_cast<size_t>(n));
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

TEST(ServiceManager, NotifiesAPathSocket) {
  testing::TempDir dir;
  std::string path = dir / "notify";
  {
    NotifyListener listener(path);
    ASSERT_TRUE(listener.bound());
    ASSERT_TRUE(send_service_notification(path, "READY=1").ok());
    EXPECT_EQ(listener.receive(), "READY=1");
    ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
    notify_service_manager("STOPPING=1");
    ::unsetenv("NOTIFY_SOCKET");
    EXPECT_EQ(listener.receive(), "STOPPING=1");
  }
}

TEST(ServiceManager, NotifiesAnAbstractSocketWithTheExactNameLength) {
  // A bound abstract name is every byte of the length given; a sender that counted the rest of
  // sun_path (or a trailing NUL) would reach another name, and recv would time out.
  std::string address = "@stackie-notify-test-" + std::to_string(::getpid());
  NotifyListener listener(address);
  ASSERT_TRUE(listener.bound());
  ASSERT_TRUE(send_service_notification(address, "READY=1").ok());
  EXPECT_EQ(listener.receive(), "READY=1");
}

TEST(ServiceManager, RefusesBadAddresses) {
  EXPECT_FALSE(send_service_notification("relative/path", "READY=1").ok());
  EXPECT_FALSE(send_service_notification("@", "READY=1").ok());
  EXPECT_FALSE(send_service_notification("/" + std::string(200, 'x'), "READY=1").ok());
  // Nobody listens there: the error says so rather than pretending it was sent.
  EXPECT_FALSE(send_service_notification("/nonexistent/notify", "READY=1").ok());
}

TEST(ServiceManager, ActivatedSocketsAreOursOnlyWhenListenPidIsUs) {
  auto none = activated_sockets({}, 42);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->count, 0);

  auto ours = activated_sockets({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "1"}}, 42);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->count, 1);
  EXPECT_TRUE(ours->names.empty());

  auto inherited = activated_sockets({{"LISTEN_PID", "41"}, {"LISTEN_FDS", "1"}}, 42);
  ASSERT_TRUE(inherited.ok());
  EXPECT_EQ(inherited->count, 0);

  auto named = activated_sockets(
      {{"LISTEN_PID", "42"}, {"LISTEN_FDS", "2"}, {"LISTEN_FDNAMES", "stackied.socket:extra"}}, 42);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->count, 2);
  ASSERT_EQ(named->names.size(), 2u);
  EXPECT_EQ(named->names[0], "stackied.socket");
  EXPECT_EQ(named->names[1], "extra");

  EXPECT_FALSE(activated_sockets({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "one"}}, 42).ok());
  EXPECT_FALSE(activated_sockets({{"LISTEN_PID", "-1"}, {"LISTEN_FDS", "1"}}, 42).ok());
  EXPECT_FALSE(activated_sockets({{"LISTEN_PID", "42"}, {"LISTEN_FDS", " 1"}}, 42).ok());
  EXPECT_FALSE(
      activated_sockets({{"LISTEN_PID", "42"}, {"LISTEN_FDS", "99999999999999"}}, 42).ok());
}

TEST(ServiceManager, ForgetsTheActivationEnvironment) {
  ::setenv("LISTEN_PID", "1", 1);
  ::setenv("LISTEN_FDS", "1", 1);
  ::setenv("LISTEN_FDNAMES", "x", 1);
  forget_activation_environment();
  EXPECT_EQ(std::getenv("LISTEN_PID"), nullptr);
  EXPECT_EQ(std::getenv("LISTEN_FDS"), nullptr);
  EXPECT_EQ(std::getenv("LISTEN_FDNAMES"), nullptr);
}

}  // namespace
}  // namespace stackie
