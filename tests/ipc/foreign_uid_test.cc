// Suite 'root': a client of a second uid. The test runs as root (scripts/test runs this suite as
// root after the rest); the client side runs in a forked child that drops to uid/gid 65534
// with setresuid. The child is forked before the loop thread starts, so it is a copy of a
// single-threaded process and may use the Client freely.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "base/posix_io.h"
#include "server_fixture.h"

namespace stackie::ipc::testing {
namespace {

using namespace std::chrono_literals;

constexpr uid_t kOtherUid = 65534;  // "nobody"; no passwd entry is needed
constexpr gid_t kOtherGid = 65534;

// A child that waits for go(), becomes kOtherUid, runs body and exits with its result.
class OtherUserChild {
 public:
  explicit OtherUserChild(const std::function<int()>& body) {
    int fds[2];
    if (stackie::pipe_cloexec(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      ::close(fds[1]);
      char go = 0;
      if (read(fds[0], &go, 1) != 1) _exit(90);
      // As root, setgid/setuid set the real, effective and saved ids alike (no setresuid on
      // macOS).
      if (setgroups(0, nullptr) != 0 || setgid(kOtherGid) != 0 || setuid(kOtherUid) != 0) _exit(91);
      if (geteuid() != kOtherUid) _exit(92);
      _exit(body());
    }
    ::close(fds[0]);
    go_fd_ = fds[1];
  }
  ~OtherUserChild() {
    if (go_fd_ >= 0) ::close(go_fd_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  bool started() const { return pid_ > 0; }
  void go() {
    const char byte = 1;
    EXPECT_EQ(write(go_fd_, &byte, 1), 1);
  }
  // The child's exit code, or -1 if it did not exit within 10 s (then it is killed).
  int wait() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(10000);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;
  bool reaped_ = false;
};

class ForeignUidTest : public ServerFixture {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root, to run a client as a second uid";
    ServerFixture::SetUp();
    // Let the other user traverse the temp dir: what must stop it is our checks.
    ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  }
};

TEST_F(ForeignUidTest, AClientOfAnotherUidIsRefusedAndTheRefusalLogged) {
  // A socket the other user can reach (socket activation hands us such an fd): only the
  // SO_PEERCRED check stands between it and the daemon.
  const std::string path = dir / "open.sock";
  const int fd = stackie::socket_cloexec(AF_UNIX, SOCK_STREAM);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  ASSERT_EQ(::listen(fd, 8), 0);

  OtherUserChild child([&] {
    auto client = Client::connect(path, quick());
    if (!client.ok()) return 10;
    auto reply = client->call("whoami");
    if (!reply.ok()) return 11;
    if (reply->ok()) return 12;  // served: the check failed
    if (reply->error().code != "permission_denied") return 13;
    return 0;
  });
  ASSERT_TRUE(child.started());
  ASSERT_TRUE(start_fd(fd).ok());  // serves uid 0 (our euid) only
  child.go();
  EXPECT_EQ(child.wait(), 0) << "10 connect failed, 11 no reply, 12 served, 13 other error";

  bool refusal_logged = false;
  for (const auto& line : logs())
    if (line.find("refused a connection from another user (uid 65534") != std::string::npos &&
        line.rfind("warning: ", 0) == 0)
      refusal_logged = true;
  EXPECT_TRUE(refusal_logged) << "no warning naming uid 65534 in the log hook";
  std::size_t requests = 99;
  run_on_loop([&] { requests = handler.requests; });
  EXPECT_EQ(requests, 0u) << "the foreign request reached the handler";

  // Our own uid is still served on the same socket.
  auto own = Client::connect(path, quick());
  ASSERT_TRUE(own.ok());
  auto reply = own->call("whoami");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->result()["uid"].as_int(), 0);
}

TEST_F(ForeignUidTest, ThePrivateDirectoryKeepsOtherUsersFromTheSocket) {
  OtherUserChild child([&] {
    auto client = Client::connect(socket_path, quick());
    if (client.ok()) return 20;
    if (client.error().code != UV_EACCES) return 21;
    if (is_daemon_not_running(client.error())) return 22;
    return 0;
  });
  ASSERT_TRUE(child.started());
  ASSERT_TRUE(start().ok());  // dir/run is 0700 root, the socket 0600
  child.go();
  EXPECT_EQ(child.wait(), 0) << "20 connected, 21 another error, 22 said 'not running'";
  expect_served();
}

TEST_F(ForeignUidTest, TheClientRefusesAServerOfAnotherUid) {
  // The reverse direction: a socket served by someone else (not root) is not our daemon.
  const std::string path = dir / "impostor.sock";
  OtherUserChild impostor([&] {
    const int fd = stackie::socket_cloexec(AF_UNIX, SOCK_STREAM);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.data(), path.size());
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return 30;
    chmod(path.c_str(), 0666);
    if (::listen(fd, 8) != 0) return 31;
    const int connection = accept(fd, nullptr, nullptr);
    if (connection < 0) return 32;
    char byte;
    (void)read(connection, &byte, 1);  // until the client hangs up
    return 0;
  });
  ASSERT_TRUE(impostor.started());
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);  // the impostor may bind in it
  impostor.go();
  ASSERT_TRUE(eventually([&] { return access(path.c_str(), F_OK) == 0; }));
  usleep(50000);  // bound; let it reach listen()
  auto client = Client::connect(path, quick());
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().code, UV_EACCES);
  EXPECT_NE(client.error().message.find("served by uid 65534"), std::string::npos)
      << client.error().message;
  EXPECT_EQ(impostor.wait(), 0);
}

}  // namespace
}  // namespace stackie::ipc::testing
