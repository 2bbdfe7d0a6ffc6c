// kill -9 of the daemon with ten sandboxed blocks, some of which daemonise grandchildren (setsid
// and a double fork): within 2 s nothing the daemon started is alive, and a restarted daemon
// brings the stack back from its state file.
#include "support/daemon_harness.h"

namespace stackie::fault {
namespace {

using KillRestoreTest = DaemonHarness;

constexpr int kBlocks = 10;

std::string ten_blocks(const std::string& dir, const std::string& helper) {
  std::string yaml = "k9:\n  blocks:\n";
  for (int i = 0; i < kBlocks; ++i) {
    std::string name = "b" + std::to_string(i);
    yaml += "    " + name + ":\n      path: .\n      command: [" + helper;
    // Every third block leaves a setsid()'d, double-forked grandchild behind.
    if (i % 3 == 0) yaml += ", daemonize, " + dir + "/" + name + ".grandchild";
    yaml += ", stamp, " + dir + "/" + name + ".starts, wait]\n";
  }
  return yaml;
}

TEST_F(KillRestoreTest, NothingSurvivesKillNineAndTheRestartedDaemonRestoresTheStack) {
  pid_t daemon = start_daemon();
  auto reply = up("k9", ten_blocks(dir_, helper_));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok()) << reply->error().message;

  // All ten blocks and the four grandchildren run (each mentions our directory).
  const std::size_t expected = kBlocks + (kBlocks + 2) / 3;
  ASSERT_TRUE(wait_for([&] { return processes_mentioning(dir_).size() >= expected; }, 10s))
      << processes_mentioning(dir_).size() << " of " << expected << " block processes";
  {
    ipc::Client client = connect();
    auto rows = ps_blocks(client);
    ASSERT_EQ(rows.size(), std::size_t(kBlocks));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i]["state"].string_or(""), "running") << i;
      EXPECT_NE(rows[i]["sandbox"].string_or(""), "passthrough") << "blocks must be sandboxed";
    }
  }
  // Each stamped its first start: a process is seen before it runs its actions, and one killed
  // before its stamp would have one stamp after the restore, not two (a CI run hit that).
  for (int i = 0; i < kBlocks; ++i) {
    std::string starts = dir_ + "/b" + std::to_string(i) + ".starts";
    ASSERT_TRUE(wait_for([&] { return !stamps(starts).empty(); }, 10s))
        << "b" << i << " never stamped its start";
  }
  std::vector<int> before = descendants(daemon);
  for (int pid : processes_mentioning(dir_))
    if (std::find(before.begin(), before.end(), pid) == before.end()) before.push_back(pid);
  ASSERT_GE(before.size(), expected);

  ::kill(daemon, SIGKILL);
  ASSERT_EQ(wait_exit(daemon, 5s), 128 + SIGKILL);
  auto killed_at = Clock::now();
  auto survivors = [&] {
    std::vector<int> alive;
    for (int pid : before)
      if (process_alive(pid)) alive.push_back(pid);
    return alive;
  };
  bool none = wait_for([&] { return survivors().empty(); }, 2s);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at);
  std::string listing;
  for (int pid : survivors()) listing += " " + std::to_string(pid);
  EXPECT_TRUE(none) << "alive 2 s after kill -9:" << listing;
  std::printf("[ figures  ] kill -9 with %d blocks: %zu processes gone in %lld ms\n", kBlocks,
              before.size(), static_cast<long long>(took.count()));

  // The restarted daemon starts every block again.
  start_daemon();
  ipc::Client client = connect();
  bool restored = wait_for(
      [&] {
        auto rows = ps_blocks(client);
        if (rows.size() != std::size_t(kBlocks)) return false;
        for (std::size_t i = 0; i < rows.size(); ++i)
          if (rows[i]["state"].string_or("") != "running") return false;
        return true;
      },
      20s);
  EXPECT_TRUE(restored) << "the restarted daemon did not bring all blocks back";
  for (int i = 0; i < kBlocks; ++i) {
    std::string starts = dir_ + "/b" + std::to_string(i) + ".starts";
    EXPECT_TRUE(wait_for([&] { return stamps(starts).size() >= 2; }, 5s))
        << "b" << i << " was not started again";
  }
  auto down = client.call("down", Json::object({{"stack", "k9"}}));
  ASSERT_TRUE(down.ok() && down->ok());
  EXPECT_TRUE(wait_for([&] { return processes_mentioning(dir_).empty(); }, 5s));
}

}  // namespace
}  // namespace stackie::fault
