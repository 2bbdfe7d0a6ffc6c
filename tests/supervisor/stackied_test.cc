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
#include "support/daemon_harness.h"

namespace stackie {
namespace {

using namespace std::chrono_literals;

// The real stackied, started by the shared daemon harness (tests/support), with a two-block
// stack that needs no sandbox.
class StackiedTest : public fault::DaemonHarness {
 protected:
  void SetUp() override {
    DaemonHarness::SetUp();
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
};

TEST_F(StackiedTest, UpPsSigtermAndRestoreWithTheRealDaemon) {
  pid_t first = start_daemon();
  ipc::Client client = connect();

  pid_t second = start_daemon();
  EXPECT_EQ(wait_exit(second, 5s), 1) << "a second daemon refuses to run";

  const char* path = std::getenv("PATH");
  auto params =
      Json::object({{"file", dir_ + "/stackie.yml"},
                    {"cwd", dir_},
                    {"env", Json::object({{"PATH", path ? path : "/bin"}, {"HOME", dir_}})},
                    {"no_sandbox", true}});
  int progress = 0;
  auto up = client.call("up", params, [&](const ipc::Event& e) {
    if (e.name == "progress") ++progress;
  });
  ASSERT_TRUE(up.ok()) << up.error().message;
  ASSERT_TRUE(up->ok()) << up->error().message;
  EXPECT_GE(progress, 4);
  auto blocks = ps_blocks(client);
  ASSERT_EQ(blocks.size(), 2u);
  int64_t db_pid = blocks[0]["pid"].int_or(0);
  EXPECT_GT(db_pid, 0);
  EXPECT_EQ(blocks[0]["state"].string_or(""), "running");
  client.close();

  ::kill(first, SIGTERM);
  EXPECT_EQ(wait_exit(first, 10s), 0) << "SIGTERM: graceful stop, exit 0";
  EXPECT_NE(::kill(static_cast<pid_t>(db_pid), 0), 0) << "blocks stopped with the daemon";
  EXPECT_EQ(::access((home_ + "/stackied.pid").c_str(), F_OK), -1);

  start_daemon();
  ipc::Client again = connect();
  std::string lost;  // why the connection failed: no point in asking again
  bool restored = wait_for(
      [&] {
        auto reply = again.call("ps");
        if (!reply.ok()) lost = reply.error().message;
        if (!reply.ok() || !reply->ok()) return !lost.empty();
        Json rows = reply->result()["blocks"];
        return rows.size() == 2 && rows[0]["state"].string_or("") == "running" &&
               rows[1]["state"].string_or("") == "running";
      },
      5s);
  ASSERT_EQ(lost, "") << "ps on the restarted daemon";
  EXPECT_TRUE(restored) << "the restarted daemon brought the stack back";
  auto down = again.call("down", Json::object({{"stack", "e2e"}}));
  ASSERT_TRUE(down.ok() && down->ok());
  auto stop = again.call("daemon.stop");
  ASSERT_TRUE(stop.ok() && stop->ok());
  EXPECT_EQ(wait_exit(daemons_.back(), 10s), 0);
}

}  // namespace
}  // namespace stackie
