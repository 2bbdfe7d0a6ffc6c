// The event bus through the real stackied (tests/support/daemon_harness): a sandboxed block
// that starts healthy, fails its health check, is killed, dies, is restarted and becomes
// healthy again; `events` gives those steps in order with their details, live (follow) and
// from the history, filtered, and through `stackie events`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ipc/client.h"
#include "support/daemon_harness.h"

namespace stackie {
namespace {

using namespace std::chrono_literals;

class EventsTest : public fault::DaemonHarness {
 protected:
  std::string flaky_stack() {
    return "ev:\n  blocks:\n    flaky:\n      path: .\n      restart: always\n"
           "      command: [" +
           helper_ +
           ", print, up, wait]\n"
           "      health:\n        exec: [" +
           helper_ + ", check-file, " + dir_ +
           "/ok]\n"
           "        interval: 200ms\n        retries: 1\n";
  }
  // Reads `event` events of one follow request until `until` matches one (or 20 s pass).
  std::vector<Json> read_until(ipc::Client& client, const std::string& action) {
    std::vector<Json> seen;
    auto deadline = fault::Clock::now() + 20s;
    while (fault::Clock::now() < deadline) {
      auto message = client.read_message(5000ms);
      if (!message.ok()) break;
      auto* event = std::get_if<ipc::Event>(&*message);
      if (event == nullptr || event->name != "event") continue;
      seen.push_back(event->data);
      if (event->data["action"].string_or("") == action) break;
    }
    return seen;
  }
  static std::vector<std::string> actions(const std::vector<Json>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e["action"].string_or("?"));
    return out;
  }
  static const Json* first(const std::vector<Json>& events, const std::string& action) {
    for (const auto& e : events)
      if (e["action"].string_or("") == action) return &e;
    return nullptr;
  }
};

TEST_F(EventsTest, ABlockThatFailsItsHealthCheckDiesAndRestartsInOrder) {
  std::ofstream(dir_ + "/ok") << "yes\n";
  start_daemon();
  auto up_reply = up("ev", flaky_stack());
  ASSERT_TRUE(up_reply.ok() && up_reply->ok())
      << (up_reply.ok() ? up_reply->error().message : up_reply.error().message);

  ipc::ClientOptions streaming;
  streaming.idle_timeout = 0ms;
  auto follower = connect_once(streaming);
  ASSERT_TRUE(follower.ok());
  ASSERT_TRUE(follower->send("events", Json::object({{"follow", true}})).ok());
  // The subscription is in place once the daemon answered something after it on the same
  // connection's loop turn: a ps on another connection is answered after it.
  ipc::Client other = connect();
  ps_blocks(other);

  ::unlink((dir_ + "/ok").c_str());  // the health check fails from now on
  std::vector<Json> live = read_until(*follower, "die");
  std::ofstream(dir_ + "/ok") << "yes\n";  // healthy again after the restart
  std::vector<Json> after = read_until(*follower, "health_status");
  live.insert(live.end(), after.begin(), after.end());

  std::vector<std::string> want = {"health_status", "kill",  "die",
                                   "restart",       "start", "health_status"};
  ASSERT_EQ(actions(live), want);
  EXPECT_EQ(live[0]["details"]["status"].string_or(""), "unhealthy");
  EXPECT_NE(live[0]["details"]["output"].string_or(""), "");
  EXPECT_EQ(live[1]["details"]["signal"].string_or(""), "SIGTERM");
  EXPECT_EQ(live[1]["details"]["reason"].string_or(""), "unhealthy");
  EXPECT_EQ(live[2]["details"]["signal"].int_or(-1), 15) << to_json(live[2]);
  EXPECT_EQ(live[2]["details"]["exit_code"].int_or(-1), 0);
  EXPECT_EQ(live[3]["details"]["restarts"].int_or(0), 1);
  EXPECT_GT(live[4]["details"]["pid"].int_or(0), 0);
  EXPECT_EQ(live[5]["details"]["status"].string_or(""), "healthy");
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(live[i]["stack"].string_or(""), "ev");
    EXPECT_EQ(live[i]["block"].string_or(""), "flaky");
    EXPECT_NE(live[i]["sandbox_id"].string_or(""), "");
    EXPECT_NE(live[i]["time"].string_or(""), "");
    if (i > 0) {
      EXPECT_GT(live[i]["seq"].int_or(0), live[i - 1]["seq"].int_or(0));
    }
  }

  // The history has all of it, from the create on, in the same order.
  std::vector<Json> history;
  auto reply = other.call("events", Json::object(), [&](const ipc::Event& e) {
    if (e.name == "event") history.push_back(e.data);
  });
  ASSERT_TRUE(reply.ok() && reply->ok());
  auto all = actions(history);
  ASSERT_GE(all.size(), 9u);
  std::vector<std::string> opening(all.begin(), all.begin() + 3);
  EXPECT_EQ(opening, (std::vector<std::string>{"create", "start", "health_status"}));
  std::vector<std::string> tail(all.end() - 6, all.end());
  EXPECT_EQ(tail, want);

  // Filters: only the deaths; an unknown key is refused.
  std::vector<Json> deaths;
  reply = other.call("events", Json::object({{"filters", Json::object({{"event", "die"}})}}),
                     [&](const ipc::Event& e) {
                       if (e.name == "event") deaths.push_back(e.data);
                     });
  ASSERT_TRUE(reply.ok() && reply->ok());
  ASSERT_EQ(deaths.size(), 1u);
  reply = other.call("events", Json::object({{"filters", Json::object({{"colour", "red"}})}}));
  ASSERT_TRUE(reply.ok());
  ASSERT_FALSE(reply->ok());
  EXPECT_EQ(reply->error().code, "invalid_params");

  // The CLI prints the same history, one line per event.
  std::string command = stackie_ + " events --no-follow -f event=die -f block=ev/flaky 2>&1";
  ::setenv("STACKIE_HOME", home_.c_str(), 1);
  ::unsetenv("XDG_RUNTIME_DIR");
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, got);
  EXPECT_EQ(::pclose(pipe), 0) << out;
  EXPECT_NE(out.find(" die ev/flaky (exit_code=0, signal=15, message=killed by SIGTERM"),
            std::string::npos)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST_F(EventsTest, DownDestroysAndAFollowerThatGoesAwayIsForgotten) {
  std::ofstream(dir_ + "/ok") << "yes\n";
  start_daemon();
  auto up_reply = up("ev", flaky_stack());
  ASSERT_TRUE(up_reply.ok() && up_reply->ok());
  ipc::Client client = connect();
  {
    // Followers that disconnect at once: the daemon must drop their subscriptions.
    for (int i = 0; i < 20; ++i) {
      auto gone = connect_once();
      ASSERT_TRUE(gone.ok());
      ASSERT_TRUE(gone->send("events", Json::object({{"follow", true}})).ok());
    }
  }
  auto down = client.call("down", Json::object({{"stack", "ev"}}));
  ASSERT_TRUE(down.ok() && down->ok());
  std::vector<std::string> seen;
  auto reply = client.call("events", Json::object({{"filters", Json::object({{"stack", "ev"}})}}),
                           [&](const ipc::Event& e) {
                             if (e.name == "event") seen.push_back(e.data["action"].string_or(""));
                           });
  ASSERT_TRUE(reply.ok() && reply->ok());
  std::vector<std::string> tail(seen.end() - 4, seen.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"kill", "die", "stop", "destroy"}));
  // Still answering: nothing of the twenty gone followers broke it.
  EXPECT_TRUE(client.call("daemon.status").ok());
}

}  // namespace
}  // namespace stackie
