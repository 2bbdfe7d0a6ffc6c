// The socket file on disk: directory and socket modes, stale and live sockets, path length,
// socket activation, and what the client says when nothing serves the path.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include <cstring>
#include <fstream>

#include "base/posix_io.h"
#include "ipc/socket_file.h"
#include "server_fixture.h"

namespace stackie::ipc::testing {
namespace {

using namespace std::chrono_literals;
using SocketFileTest = ServerFixture;

mode_t mode_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

// A socket bound at path; listening or not. Returns the fd.
int raw_socket_at(const std::string& path, bool listening) {
  const int fd = stackie::socket_cloexec(AF_UNIX, SOCK_STREAM);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << path;
  if (listening) {
    EXPECT_EQ(::listen(fd, 8), 0);
  }
  return fd;
}

bool logged(const std::vector<std::string>& logs, std::string_view text) {
  for (const auto& line : logs)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

TEST_F(SocketFileTest, CreatesAPrivateDirectoryAndA0600Socket) {
  socket_path = dir / "a/b/stackied.sock";
  ASSERT_TRUE(start().ok());
  EXPECT_EQ(mode_of(dir / "a"), 0700u);
  EXPECT_EQ(mode_of(dir / "a/b"), 0700u);
  EXPECT_EQ(mode_of(socket_path), 0600u);
  struct stat info {};
  ASSERT_EQ(lstat(socket_path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  expect_served();
}

TEST_F(SocketFileTest, RefusesADirectoryOpenToOthers) {
  ASSERT_EQ(mkdir((dir / "run").c_str(), 0700), 0);
  ASSERT_EQ(chmod((dir / "run").c_str(), 0755), 0);
  Status status = start();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, UV_EACCES);
  EXPECT_NE(status.error().message.find("mode 0755"), std::string::npos) << status.error().message;
  EXPECT_NE(status.error().message.find("chmod 700"), std::string::npos);
  EXPECT_EQ(mode_of(dir / "run"), 0755u);  // refused, not silently "fixed"
}

TEST_F(SocketFileTest, RefusesASymlinkedDirectory) {
  ASSERT_EQ(mkdir((dir / "real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir / "real").c_str(), (dir / "run").c_str()), 0);
  Status status = start();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("symlink"), std::string::npos) << status.error().message;
}

TEST_F(SocketFileTest, ReplacesAStaleSocket) {
  ASSERT_EQ(mkdir((dir / "run").c_str(), 0700), 0);
  ::close(raw_socket_at(socket_path, false));  // bound, never accepting: a killed daemon's file
  auto refused = Client::connect(socket_path, quick());
  ASSERT_FALSE(refused.ok());  // nothing accepts there
  ASSERT_TRUE(start().ok());
  EXPECT_TRUE(logged(logs(), "replaced the stale socket")) << "no log of the replacement";
  expect_served();
}

TEST_F(SocketFileTest, RefusesALiveSocket) {
  ASSERT_EQ(mkdir((dir / "run").c_str(), 0700), 0);
  const int live = raw_socket_at(socket_path, true);  // someone else accepts there
  Status status = start();
  ::close(live);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, UV_EADDRINUSE);
  EXPECT_NE(status.error().message.find("another daemon is running"), std::string::npos)
      << status.error().message;
}

TEST_F(SocketFileTest, ASecondServerOnThePathIsRefused) {
  ASSERT_TRUE(start().ok());
  uv_loop_t other_loop;
  ASSERT_EQ(uv_loop_init(&other_loop), 0);
  {
    TestHandler other_handler;
    Server second(&other_loop, other_handler);
    Status status = second.listen(socket_path);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, UV_EADDRINUSE);
    EXPECT_NE(status.error().message.find("another daemon is running"), std::string::npos);
  }
  uv_run(&other_loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&other_loop), 0);
  expect_served();  // the first one is untouched
}

TEST_F(SocketFileTest, RefusesToReplaceSomethingThatIsNotASocket) {
  ASSERT_EQ(mkdir((dir / "run").c_str(), 0700), 0);
  std::ofstream(socket_path) << "precious";
  Status status = start();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, UV_EEXIST);
  std::ifstream kept(socket_path);
  std::string content;
  kept >> content;
  EXPECT_EQ(content, "precious");
}

TEST_F(SocketFileTest, RefusesAPathTooLongForSunPath) {
  const std::string path = dir / (std::string(120, 'p') + ".sock");
  Status status = start({}, path);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, UV_ENAMETOOLONG);
  EXPECT_NE(status.error().message.find("more than the 107"), std::string::npos)
      << status.error().message;
  EXPECT_NE(status.error().message.find(path), std::string::npos);  // named in full
  auto client = Client::connect(path, quick());
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().code, UV_ENAMETOOLONG);
  EXPECT_FALSE(is_daemon_not_running(client.error()));
  // The longest path that fits works.
  EXPECT_TRUE(check_socket_path("/" + std::string(106, 'x')).ok());
  EXPECT_FALSE(check_socket_path("/" + std::string(107, 'x')).ok());
  EXPECT_FALSE(check_socket_path("relative.sock").ok());
}

TEST_F(SocketFileTest, RemovesItsSocketOnCloseButKeepsTheLock) {
  ASSERT_TRUE(start().ok());
  EXPECT_EQ(stop(), 0);
  struct stat info {};
  EXPECT_NE(lstat(socket_path.c_str(), &info), 0);
  // The lock is released: another daemon can start right away.
  auto lock = lock_socket_path(socket_path);
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  ::close(*lock);
}

TEST_F(SocketFileTest, ServesAnInheritedListeningSocket) {
  const std::string path = dir / "activated.sock";
  const int fd = raw_socket_at(path, true);
  ASSERT_TRUE(start_fd(fd).ok());
  auto client = Client::connect(path, quick());
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto reply = client->call("echo", Json::object({{"fd", true}}));
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE(reply->result()["fd"].as_bool());
}

TEST_F(SocketFileTest, RefusesAnFdThatIsNotAListeningUnixSocket) {
  const int not_listening = raw_socket_at(dir / "idle.sock", false);
  Status status = start_fd(not_listening);
  EXPECT_FALSE(status.ok());
  ::close(not_listening);
  const int file = open((dir / "file").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  status = check_listening_unix_socket(file);
  EXPECT_FALSE(status.ok());
  ::close(file);
}

TEST_F(SocketFileTest, ClientSaysDaemonNotRunning) {
  auto missing = Client::connect(socket_path, quick());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, UV_ENOENT);
  EXPECT_TRUE(is_daemon_not_running(missing.error()));
  EXPECT_NE(missing.error().message.find("not running"), std::string::npos);

  ASSERT_EQ(mkdir((dir / "run").c_str(), 0700), 0);
  ::close(raw_socket_at(socket_path, false));  // stale file
  auto stale = Client::connect(socket_path, quick());
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, UV_ECONNREFUSED);
  EXPECT_TRUE(is_daemon_not_running(stale.error()));

  EXPECT_FALSE(is_daemon_not_running(Error{UV_EACCES, "permission denied"}));
}

// A daemon killed while a system call of its kept it from closing its files: its socket still
// queues connections that nothing will answer. Played by a child that makes the socket and is
// killed while a child of its own keeps the socket open.
TEST_F(SocketFileTest, ClientSaysDaemonExitingWhenTheSocketsMakerWasKilled) {
  ASSERT_EQ(mkdir((dir / "run").c_str(), 0700), 0);
  int ready[2], hold[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(hold), 0);
  const pid_t maker = fork();
  ASSERT_GE(maker, 0);
  if (maker == 0) {
    close(ready[0]);
    close(hold[1]);
    raw_socket_at(socket_path, true);
    if (fork() == 0) {  // the keeper: holds the socket until `hold` is closed
      char byte;
      (void)!read(hold[0], &byte, 1);
      _exit(0);
    }
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  close(ready[1]);
  close(hold[0]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);

  auto alive = Client::connect(socket_path, quick());
  EXPECT_TRUE(alive.ok()) << "a living maker is served: " << alive.error().message;

  ASSERT_EQ(kill(maker, SIGKILL), 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, maker, &info, WEXITED | WNOWAIT), 0);  // dead, not reaped: a zombie
  auto zombie = Client::connect(socket_path, quick());
  ASSERT_FALSE(zombie.ok());
  EXPECT_TRUE(is_daemon_exiting(zombie.error())) << zombie.error().message;
  EXPECT_FALSE(is_daemon_not_running(zombie.error()));
  EXPECT_NE(zombie.error().message.find("pid " + std::to_string(maker)), std::string::npos)
      << zombie.error().message;

  ASSERT_EQ(waitpid(maker, nullptr, 0), maker);  // gone; only the keeper holds the socket
  auto gone = Client::connect(socket_path, quick());
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(is_daemon_exiting(gone.error())) << gone.error().message;

  close(hold[1]);  // the keeper exits: the socket is closed, nothing serves the path
  auto refused = Client::connect(socket_path, quick());
  for (int i = 0; i < 500 && !refused.ok() && is_daemon_exiting(refused.error()); ++i) {
    std::this_thread::sleep_for(10ms);
    refused = Client::connect(socket_path, quick());
  }
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(is_daemon_not_running(refused.error())) << refused.error().message;
}

}  // namespace
}  // namespace stackie::ipc::testing
