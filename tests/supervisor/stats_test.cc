// `stats` through the real stackied: a sandboxed block that burns a CPU and holds 64 MiB, and
// names its process like a /proc/PID/stat line (a hostile block: a parser that reads the name
// up to its first ')' takes its fields for the real ones), next to an idle one.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ipc/client.h"
#include "supervisor/block_stats.h"
#include "support/daemon_harness.h"

namespace stackie {
namespace {

using namespace std::chrono_literals;

class StatsTest : public fault::DaemonHarness {};

Json names(const std::string& name) {
  Json list = Json::array();
  list.push_back(name);
  return list;
}

const Json* row_of(const Json& blocks, const std::string& name) {
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i]["name"].string_or("") == name) return &blocks[i];
  return nullptr;
}

TEST_F(StatsTest, ABusyBlockAndAnIdleOneMeasuredFromTheirOwnProcesses) {
  start_daemon();
  {
    // Nothing up: still one answer, after one interval, with no rows.
    ipc::Client early = connect();
    auto none = early.call("stats", Json::object({{"interval_ms", 200}}));
    ASSERT_TRUE(none.ok()) << none.error().message;
    ASSERT_TRUE(none->ok());
    EXPECT_EQ(none->result()["blocks"].size(), 0u);
  }
  std::string stack = "st:\n  blocks:\n    hog:\n      path: .\n      command: [" + helper_ +
                      ", alloc, 64, name, \"evil) Z 1 1 1\", print, ready, spin, 0]\n"
                      "    idle:\n      path: .\n      command: [" +
                      helper_ + ", wait]\n";
  auto reply = up("st", stack);
  ASSERT_TRUE(reply.ok() && reply->ok())
      << (reply.ok() ? reply->error().message : reply.error().message);
  ipc::Client client = connect();
  // The hog has allocated once it printed "ready".
  bool ready = wait_for(
      [&] {
        bool seen = false;
        auto logs =
            client.call("logs", Json::object({{"blocks", names("hog")}}), [&](const ipc::Event& e) {
              if (e.data["text"].string_or("") == "ready") seen = true;
            });
        return logs.ok() && seen;
      },
      10s);
  ASSERT_TRUE(ready);

  auto stats = client.call("stats", Json::object({{"interval_ms", 1000}}));
  ASSERT_TRUE(stats.ok() && stats->ok())
      << (stats.ok() ? stats->error().message : stats.error().message);
  const Json& blocks = stats->result()["blocks"];
  EXPECT_EQ(stats->result()["v"].int_or(0), 1);
  const Json* hog = row_of(blocks, "hog");
  const Json* idle = row_of(blocks, "idle");
  ASSERT_NE(hog, nullptr) << to_json(stats->result());
  ASSERT_NE(idle, nullptr);
  std::string source = (*hog)["source"].string_or("");
  EXPECT_TRUE(source == "cgroup" || source == "proc") << source;
  // The hog spins on one core, but a loaded runner (tests run in parallel on two cores) may
  // give it far less than all of one: the share must show, and stand well above the idle's.
  double hog_cpu = (*hog)["cpu_percent"].number_or(-1);
  double idle_cpu = (*idle)["cpu_percent"].number_or(100);
  EXPECT_GE(hog_cpu, 10.0) << to_json(*hog);
  EXPECT_GT(hog_cpu, idle_cpu + 5.0) << to_json(*hog) << " " << to_json(*idle);
  EXPECT_LE(idle_cpu, 20.0) << to_json(*idle);
  EXPECT_GE((*hog)["memory_bytes"].int_or(0), 64 << 20) << to_json(*hog);
  EXPECT_GE((*hog)["rss_bytes"].int_or(0), 64 << 20) << to_json(*hog);
  EXPECT_GE((*hog)["pss_bytes"].int_or(0), 60 << 20) << to_json(*hog);
  EXPECT_LT((*idle)["rss_bytes"].int_or(1 << 30), 64 << 20) << to_json(*idle);
  EXPECT_GE((*hog)["pids"].int_or(0), 1);
  EXPECT_TRUE((*hog)["read_bytes"].is_int()) << to_json(*hog);
  EXPECT_TRUE((*hog)["uptime_s"].is_int());
  EXPECT_EQ((*hog)["stack"].string_or(""), "st");
  EXPECT_NE((*hog)["sandbox_id"].string_or(""), "");

  // Named blocks only; an unknown one is not_found; a bad interval is refused.
  stats = client.call("stats", Json::object({{"blocks", names("idle")}, {"interval_ms", 200}}));
  ASSERT_TRUE(stats.ok() && stats->ok());
  EXPECT_EQ(stats->result()["blocks"].size(), 1u);
  stats = client.call("stats", Json::object({{"blocks", names("nope")}}));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->ok() ? "" : stats->error().code, "not_found");
  stats = client.call("stats", Json::object({{"interval_ms", 5}}));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->ok() ? "" : stats->error().code, "invalid_params");

  // Following: one `stats` event per interval, until the client goes.
  ipc::ClientOptions streaming;
  streaming.idle_timeout = 0ms;
  auto follower = connect_once(streaming);
  ASSERT_TRUE(follower.ok());
  ASSERT_TRUE(follower->send("stats", Json::object({{"follow", true}, {"interval_ms", 200}})).ok());
  int samples = 0;
  for (int i = 0; i < 20 && samples < 3; ++i) {
    auto message = follower->read_message(5000ms);
    ASSERT_TRUE(message.ok());
    if (auto* event = std::get_if<ipc::Event>(&*message); event && event->name == "stats") {
      ++samples;
      EXPECT_EQ(event->data["blocks"].size(), 2u);
    }
  }
  EXPECT_EQ(samples, 3);
  follower->close();
  EXPECT_TRUE(client.call("daemon.status").ok());
}

TEST(BlockStats, AProcessNameLikeAStatLineIsSkippedUpToItsLastParenthesis) {
  // What a hostile block's process shows in /proc/PID/stat: its name holds ") Z 1 ".
  std::string stat = "4242 (evil) Z 1 1 1) S 4000 4242 4242 0 -1 4194560 100 0 0 0 250 50";
  auto fields = stat_fields_after_name(stat);
  ASSERT_GE(fields.size(), 13u);
  EXPECT_EQ(fields[0], "S");
  EXPECT_EQ(fields[1], "4000");  // the real parent, not the 1 the name holds
  EXPECT_EQ(fields[11], "250");
  EXPECT_EQ(fields[12], "50");
  EXPECT_TRUE(stat_fields_after_name("no parenthesis at all").empty());
}

TEST(BlockStats, CpuPercentIsNullAcrossARestartOrWithoutASecondSample) {
  StatsSample a, b;
  a.running = b.running = true;
  a.at_ms = 1000;
  b.at_ms = 2000;
  a.cpu_usec = 0;
  b.cpu_usec = 500000;
  EXPECT_EQ(cpu_percent(a, b), Json(50.0));
  b.cpu_usec = 0;
  a.cpu_usec = 10;  // a new process: its counter started again
  EXPECT_TRUE(cpu_percent(a, b).is_null());
  EXPECT_TRUE(cpu_percent(StatsSample{}, b).is_null());
}

}  // namespace
}  // namespace stackie
