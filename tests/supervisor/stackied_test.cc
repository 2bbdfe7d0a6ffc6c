// The real stackied binary, end to end: a real stack file through the loader (unsandboxed
// blocks), single instance, SIGTERM = graceful stop with exit 0, and a restarted daemon that
// brings the stack back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "ipc/client.h"

namespace stackie {
namespace {

class StackiedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = "/tmp/stackied-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    home_ = dir_ + "/home";
    stackied_ = std::string(std::getenv("STACKIE_BUILD_ROOT")) + "/src/stackied";
    std::ofstream(dir_ + "/stackie.yml")
        << "e2e:\n"
           "  blocks:\n"
           "    db:\n"
           "      command: \"echo db up; exec sleep 600\"\n"
           "      restart: \"no\"\n"
           "    api:\n"
           "      command: [sh, -c, \"echo api up; exec sleep 600\"]\n"
           "      depends_on: [db]\n";
  }
  void TearDown() override {
    // A daemon left by a failed test stops its blocks on SIGTERM; SIGKILL only if it hangs.
    for (pid_t pid : std::vector<pid_t>(daemons_)) {
      ::kill(pid, SIGTERM);
      if (wait_exit(pid, 5000) < 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
    (void)!std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  pid_t start_daemon() {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("STACKIE_HOME", home_.c_str(), 1);
      ::unsetenv("XDG_RUNTIME_DIR");
      std::string log = dir_ + "/daemon.log";
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      ::execl(stackied_.c_str(), stackied_.c_str(), "--foreground", nullptr);
      std::_Exit(127);
    }
    daemons_.push_back(pid);
    return pid;
  }
  Result<ipc::Client> connect() {
    std::string socket = home_ + "/run/stackied.sock";
    for (int i = 0; i < 100; ++i) {
      auto client = ipc::Client::connect(socket);
      if (client.ok() || !ipc::is_daemon_not_running(client.error())) return client;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return ipc::Client::connect(socket);
  }
  int wait_exit(pid_t pid, int timeout_ms) {
    for (int i = 0; i < timeout_ms / 10; ++i) {
      int status;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        std::erase(daemons_, pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  Json ps_blocks(ipc::Client& client) {
    auto reply = client.call("ps");
    EXPECT_TRUE(reply.ok() && reply->ok());
    return reply.ok() && reply->ok() ? reply->result()["blocks"] : Json();
  }
  std::string dir_, home_, stackied_;
  std::vector<pid_t> daemons_;
};

TEST_F(StackiedTest, UpPsSigtermAndRestoreWithTheRealDaemon) {
  pid_t first = start_daemon();
  auto client = connect();
  ASSERT_TRUE(client.ok()) << client.error().message;

  pid_t second = start_daemon();
  EXPECT_EQ(wait_exit(second, 5000), 1) << "a second daemon refuses to run";

  const char* path = std::getenv("PATH");
  auto params = Json::object(
      {{"file", dir_ + "/stackie.yml"},
       {"cwd", dir_},
       {"env", Json::object({{"PATH", path ? path : "/bin"}, {"HOME", dir_}})},
       {"no_sandbox", true}});
  int progress = 0;
  auto up = client->call("up", params, [&](const ipc::Event& e) {
    if (e.name == "progress") ++progress;
  });
  ASSERT_TRUE(up.ok()) << up.error().message;
  ASSERT_TRUE(up->ok()) << up->error().message;
  EXPECT_GE(progress, 4);
  auto blocks = ps_blocks(*client);
  ASSERT_EQ(blocks.size(), 2u);
  int64_t db_pid = blocks[0]["pid"].int_or(0);
  EXPECT_GT(db_pid, 0);
  EXPECT_EQ(blocks[0]["state"].string_or(""), "running");
  client->close();

  ::kill(first, SIGTERM);
  EXPECT_EQ(wait_exit(first, 10000), 0) << "SIGTERM: graceful stop, exit 0";
  EXPECT_NE(::kill(static_cast<pid_t>(db_pid), 0), 0) << "blocks stopped with the daemon";
  EXPECT_EQ(::access((home_ + "/stackied.pid").c_str(), F_OK), -1);

  start_daemon();
  auto again = connect();
  ASSERT_TRUE(again.ok()) << again.error().message;
  bool restored = false;
  for (int i = 0; i < 100 && !restored; ++i) {
    auto rows = ps_blocks(*again);
    restored = rows.size() == 2 && rows[0]["state"].string_or("") == "running" &&
               rows[1]["state"].string_or("") == "running";
    if (!restored) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(restored) << "the restarted daemon brought the stack back";
  auto down = again->call("down", Json::object({{"stack", "e2e"}}));
  ASSERT_TRUE(down.ok() && down->ok());
  auto stop = again->call("daemon.stop");
  ASSERT_TRUE(stop.ok() && stop->ok());
  EXPECT_EQ(wait_exit(daemons_.back(), 10000), 0);
}

}  // namespace
}  // namespace stackie
