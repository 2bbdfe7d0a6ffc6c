// Server + Client over a real Unix socket: request/reply, events, limits, concurrency.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "server_fixture.h"

namespace stackie::ipc::testing {
namespace {

using namespace std::chrono_literals;

using ServerTest = ServerFixture;

TEST_F(ServerTest, RequestAndReply) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  Json params = Json::object({{"file", "/x/stackie-stack.yml"}, {"n", 3}});
  auto reply = client.call("echo", params);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok());
  EXPECT_EQ(reply->result(), params);
  EXPECT_EQ(reply->id, 1);
  auto second = client.call("echo", Json::object());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->id, 2);  // ids advance per connection
}

TEST_F(ServerTest, RemoteErrorsCarryCodeMessageAndData) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  auto reply = client.call("fail");
  ASSERT_TRUE(reply.ok());
  ASSERT_FALSE(reply->ok());
  EXPECT_EQ(reply->error().code, "not_found");
  EXPECT_EQ(reply->error().message, "no block 'ghost'");
  EXPECT_EQ(reply->error().data["block"].as_string(), "ghost");
  auto unknown = client.call("no.such.method");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->error().code, "unknown_method");
}

TEST_F(ServerTest, EventsArriveInOrderBeforeTheReply) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  std::vector<std::int64_t> ticks;
  auto reply = client.call("stream", Json::object({{"count", 500}}), [&](const Event& event) {
    EXPECT_EQ(event.name, "tick");
    ticks.push_back(event.data["i"].as_int());
  });
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->result()["count"].as_int(), 500);
  ASSERT_EQ(ticks.size(), 500u);
  for (std::size_t i = 0; i < ticks.size(); ++i) EXPECT_EQ(ticks[i], static_cast<int>(i));
}

TEST_F(ServerTest, ReportsThePeerCredentials) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  auto reply = client.call("whoami");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->result()["uid"].as_int(), static_cast<std::int64_t>(geteuid()));
  EXPECT_EQ(reply->result()["pid"].as_int(), static_cast<std::int64_t>(getpid()));
}

TEST_F(ServerTest, ManyConcurrentClients) {
  ASSERT_TRUE(start().ok());
  constexpr int kClients = 40, kCalls = 25;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      auto client = Client::connect(socket_path, quick());
      if (!client.ok()) return;
      for (int i = 0; i < kCalls; ++i) {
        auto reply = client->call("echo", Json::object({{"t", t}, {"i", i}}));
        if (reply.ok() && reply->ok() && reply->result()["t"].as_int() == t &&
            reply->result()["i"].as_int() == i)
          ++good;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(good.load(), kClients * kCalls);
  EXPECT_TRUE(eventually([&] { return connection_count() == 0; }));
}

TEST_F(ServerTest, PipelinedRequestsAreAllAnswered) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  std::string batch;
  for (int i = 1; i <= 20; ++i)
    batch += encode_request(Request{i, "echo", Json::object({{"i", i}})});
  ASSERT_TRUE(client.send_raw(batch).ok());
  for (int i = 1; i <= 20; ++i) {
    auto message = client.read_message(5000ms);
    ASSERT_TRUE(message.ok()) << message.error().message;
    const Reply& reply = std::get<Reply>(*message);
    EXPECT_EQ(reply.id, i);
    EXPECT_EQ(reply.result()["i"].as_int(), i);
  }
}

// At the limit with every connection waiting for an answer (an `up`, a `logs -f`), a new
// client is refused `busy`.
TEST_F(ServerTest, ConnectionLimitAnswersBusy) {
  ServerOptions options;
  options.limits.max_connections = 2;
  ASSERT_TRUE(start(options).ok());
  Client first = connect(), second = connect();
  ASSERT_TRUE(first.send("hold").ok());
  ASSERT_TRUE(second.send("hold").ok());
  ASSERT_TRUE(wait_held(2));
  Client third = connect();
  auto refusal = third.read_message(5000ms);
  ASSERT_TRUE(refusal.ok()) << refusal.error().message;
  EXPECT_EQ(std::get<Reply>(*refusal).error().code, "busy");
  EXPECT_FALSE(third.read_message(5000ms).ok());  // then closed
  first.close();
  ASSERT_TRUE(eventually([&] { return connection_count() == 1; }));
  Client fourth = connect();  // a slot is free again
  EXPECT_TRUE(fourth.call("echo").ok());
}

TEST_F(ServerTest, ARefusedCallReportsTheServersReasonNotAHangUp) {
  ServerOptions options;
  options.limits.max_connections = 1;
  ASSERT_TRUE(start(options).ok());
  Client first = connect();
  ASSERT_TRUE(first.send("hold").ok());
  ASSERT_TRUE(wait_held(1));
  Client refused = connect();
  // Let the server refuse and hang up before our request goes out.
  ASSERT_TRUE(eventually([&] { return connection_count() == 1; }));
  auto reply = refused.call("echo");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_FALSE(reply->ok());
  EXPECT_EQ(reply->error().code, "busy");
}

// The reserve (issue 15): connections with nothing in flight do not keep a new client out; the
// oldest of them makes room.
TEST_F(ServerTest, AtTheLimitAnIdleConnectionMakesRoomForANewClient) {
  ServerOptions options;
  options.limits.max_connections = 2;
  ASSERT_TRUE(start(options).ok());
  Client silent = connect();  // never asks anything
  Client answered = connect();
  ASSERT_TRUE(answered.call("echo").ok());  // asked, answered, now idle
  Client newcomer = connect();
  auto reply = newcomer.call("echo");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(reply->ok());
  auto evicted = silent.read_message(5000ms);
  ASSERT_TRUE(evicted.ok()) << evicted.error().message;
  EXPECT_EQ(std::get<Reply>(*evicted).error().code, "busy");
}

TEST_F(ServerTest, AConnectionThatSendsNoRequestIsClosed) {
  ServerOptions options;
  options.limits.first_request_ms = 200;
  ASSERT_TRUE(start(options).ok());
  Client silent = connect();
  auto closed = silent.read_message(5000ms);
  ASSERT_TRUE(closed.ok()) << closed.error().message;
  EXPECT_NE(std::get<Reply>(*closed).error().message.find("no request"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return connection_count() == 0; }));
  Client asking = connect();  // one that asks in time is served
  EXPECT_TRUE(asking.call("echo").ok());
}

TEST_F(ServerTest, PendingRequestLimitAnswersBusy) {
  ServerOptions options;
  options.limits.max_pending_requests = 2;
  ASSERT_TRUE(start(options).ok());
  Client client = connect();
  ASSERT_TRUE(client.send("hold").ok());
  ASSERT_TRUE(client.send("hold").ok());
  auto third = client.call("echo");
  ASSERT_TRUE(third.ok());
  ASSERT_FALSE(third->ok());
  EXPECT_EQ(third->error().code, "busy");
  EXPECT_NE(third->error().message.find("limit is 2"), std::string::npos);
  run_on_loop([&] {
    for (Session& session : handler.held) session.reply(Json::object());
  });
  // Answered: the connection takes requests again.
  auto again = client.call("echo");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->ok());
}

TEST_F(ServerTest, ASessionGoesDeadWhenItsClientLeaves) {
  ASSERT_TRUE(start().ok());
  {
    Client client = connect();
    ASSERT_TRUE(client.send("hold").ok());
    ASSERT_TRUE(wait_held(1));
  }  // the client goes away, like Ctrl-C on `stackie logs -f`
  std::vector<std::uint64_t> closed;
  ASSERT_TRUE(eventually([&] {
    run_on_loop([&] { closed = handler.closed; });
    return closed.size() == 1;
  }));
  run_on_loop([&] {
    Session& session = handler.held[0];
    EXPECT_EQ(closed[0], session.serial());
    EXPECT_FALSE(session.alive());
    EXPECT_EQ(session.event("line", Json::object()), EventOutcome::gone);
    session.reply(Json::object());  // harmless
    EXPECT_FALSE(handler.alive_in_on_close[0]);
    EXPECT_EQ(handler.event_after_close[0], EventOutcome::gone);
  });
  expect_served();
}

TEST_F(ServerTest, ASlowStreamReaderIsToldWhatItSkipped) {
  ServerOptions options;
  options.limits.max_write_queue = 64 * 1024;
  ASSERT_TRUE(start(options).ok());
  Client client = connect();
  // 20000 events of 1 KiB at once: far more than the socket buffer plus 64 KiB of queue.
  ASSERT_TRUE(client.send("flood", Json::object({{"count", 20000}, {"size", 1024}})).ok());
  // Read nothing while the server pushes: the slow reader.
  ASSERT_TRUE(eventually([&] {
    std::size_t requests = 0;
    run_on_loop([&] { requests = handler.requests; });
    return requests == 1;
  }));
  std::int64_t lines = 0, skipped_reported = 0, next_expected = 0;
  bool in_order = true;
  for (;;) {
    auto message = client.read_message(5000ms);
    ASSERT_TRUE(message.ok()) << message.error().message;
    if (auto* event = std::get_if<Event>(&*message)) {
      if (event->name == "skipped") {
        skipped_reported += event->data["count"].as_int();
        continue;
      }
      const std::int64_t i = event->data["i"].as_int();
      in_order = in_order && i >= next_expected;
      next_expected = i + 1;
      ++lines;
      continue;
    }
    const Reply& reply = std::get<Reply>(*message);
    ASSERT_TRUE(reply.ok());
    EXPECT_EQ(reply.result()["sent"].as_int(), lines);
    EXPECT_EQ(reply.result()["skipped"].as_int(), skipped_reported);
    EXPECT_EQ(reply.result()["gone"].as_int(), 0);
    break;
  }
  EXPECT_TRUE(in_order);
  EXPECT_GT(skipped_reported, 0);
  EXPECT_EQ(lines + skipped_reported, 20000);
  std::printf("[ figures  ] flood of 20000 x 1 KiB events, 64 KiB queue: %lld sent, %lld skipped\n",
              static_cast<long long>(lines), static_cast<long long>(skipped_reported));
}

// A stream that asks takes_events() and skips what the client cannot take without building it
// tells the client the same count as event() would have.
TEST_F(ServerTest, EventsSkippedUnbuiltAreToldLikeSkippedOnes) {
  ServerOptions options;
  options.limits.max_write_queue = 64 * 1024;
  ASSERT_TRUE(start(options).ok());
  Client client = connect();
  ASSERT_TRUE(
      client.send("flood_while_taken", Json::object({{"count", 20000}, {"size", 1024}})).ok());
  std::int64_t lines = 0, skipped_reported = 0;
  for (;;) {
    auto message = client.read_message(5000ms);
    ASSERT_TRUE(message.ok()) << message.error().message;
    if (auto* event = std::get_if<Event>(&*message)) {
      if (event->name == "skipped")
        skipped_reported += event->data["count"].as_int();
      else
        ++lines;
      continue;
    }
    const Reply& reply = std::get<Reply>(*message);
    ASSERT_TRUE(reply.ok());
    EXPECT_TRUE(reply.result()["refused"].as_bool());
    EXPECT_EQ(reply.result()["sent"].as_int(), lines);
    EXPECT_EQ(reply.result()["skipped"].as_int(), skipped_reported);
    break;
  }
  EXPECT_GT(skipped_reported, 0);
  EXPECT_EQ(lines + skipped_reported, 20000);
  EXPECT_FALSE(client.read_message(200ms).ok()) << "nothing follows the reply";
}

TEST_F(ServerTest, AClientThatDoesNotReadItsRepliesIsDropped) {
  ServerOptions options;
  options.limits.max_write_queue = 256 * 1024;
  ASSERT_TRUE(start(options).ok());
  Client greedy = connect();
  std::string batch;  // 40 requests in one write, each asking for a 200 KiB reply
  for (int i = 1; i <= 40; ++i)
    batch += encode_request(Request{i, "big", Json::object({{"size", 200 * 1024}})});
  ASSERT_TRUE(greedy.send_raw(batch).ok());
  ASSERT_TRUE(eventually([&] {
    for (const auto& line : logs())
      if (line.find("does not read its replies") != std::string::npos) return true;
    return false;
  }));
  expect_served();
  greedy.close();
  EXPECT_TRUE(eventually([&] { return connection_count() == 0; }));
}

TEST_F(ServerTest, OneReplyLargerThanTheQueueLimitReachesAReadingClient) {
  ASSERT_TRUE(start().ok());  // 4 MiB queue limit
  Client client = connect();
  auto reply = client.call("big", Json::object({{"size", 10 << 20}}));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok());
  EXPECT_EQ(reply->result()["blob"].as_string().size(), std::size_t{10} << 20);
}

TEST_F(ServerTest, AHalfClosedClientStillGetsItsReply) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  ASSERT_TRUE(client.send("stream", Json::object({{"count", 3}})).ok());
  ASSERT_EQ(shutdown(client.fd(), SHUT_WR), 0);
  int events = 0;
  for (;;) {
    auto message = client.read_message(5000ms);
    ASSERT_TRUE(message.ok()) << message.error().message;
    if (std::holds_alternative<Event>(*message)) {
      ++events;
      continue;
    }
    EXPECT_TRUE(std::get<Reply>(*message).ok());
    break;
  }
  EXPECT_EQ(events, 3);
  auto after = client.read_message(5000ms);  // and then the server closes
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code, UV_EOF);
}

TEST_F(ServerTest, ClientTimesOutOnSilence) {
  ASSERT_TRUE(start().ok());
  ClientOptions options = quick();
  options.idle_timeout = 200ms;
  auto client = Client::connect(socket_path, options);
  ASSERT_TRUE(client.ok());
  const auto before = std::chrono::steady_clock::now();
  auto reply = client->call("hold");
  const auto waited = std::chrono::steady_clock::now() - before;
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, UV_ETIMEDOUT);
  EXPECT_GE(waited, 190ms);  // a hang instead of the timeout is meson's test timeout
}

TEST_F(ServerTest, ATickingCallTicksWhileWaitingAndStillTimesOutOnSilence) {
  ASSERT_TRUE(start().ok());
  ClientOptions options = quick();
  options.idle_timeout = 600ms;
  auto client = Client::connect(socket_path, options);
  ASSERT_TRUE(client.ok());
  int ticks = 0;
  auto reply = client->call("hold", Json::object(), {}, Client::Tick{50ms, [&] { ++ticks; }});
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, UV_ETIMEDOUT);  // ticks do not count as messages
  EXPECT_GE(ticks, 5);
  EXPECT_LE(ticks, 13);

  // Answered in time: the reply ends the call; the ticks ran meanwhile.
  ticks = 0;
  std::thread answer([&] {
    EXPECT_TRUE(wait_held(2));
    std::this_thread::sleep_for(300ms);
    run_on_loop([&] { handler.held[1].reply(Json::object({{"late", true}})); });
  });
  auto late = client->call("hold", Json::object(), {}, Client::Tick{50ms, [&] { ++ticks; }});
  answer.join();
  ASSERT_TRUE(late.ok());
  ASSERT_TRUE(late->ok());
  EXPECT_TRUE(late->result()["late"].bool_or(false));
  EXPECT_GE(ticks, 3);
}

TEST_F(ServerTest, ClosingTheServerAnswersPendingRequests) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  ASSERT_TRUE(client.send("hold").ok());
  ASSERT_TRUE(wait_held(1));
  run_on_loop([&] { server->close(); });
  auto message = client.read_message(5000ms);
  ASSERT_TRUE(message.ok()) << message.error().message;
  EXPECT_EQ(std::get<Reply>(*message).error().code, "shutting_down");
  run_on_loop([&] { EXPECT_EQ(handler.closed.size(), 1u); });
  struct stat info {};
  EXPECT_NE(lstat(socket_path.c_str(), &info), 0) << "the socket file outlived the server";
  auto later = Client::connect(socket_path, quick());
  ASSERT_FALSE(later.ok());
  EXPECT_TRUE(is_daemon_not_running(later.error()));
}

TEST_F(ServerTest, AHandlerCanStopTheServerAndItsReplyStillArrives) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  auto reply = client.call("shutdown");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(reply->ok());
  EXPECT_TRUE(eventually([&] {
    bool closing = false;
    run_on_loop([&] { closing = server->closing() && server->connection_count() == 0; });
    return closing;
  }));
}

TEST_F(ServerTest, SessionsOutliveTheServerHarmlessly) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  ASSERT_TRUE(client.send("hold").ok());
  ASSERT_TRUE(wait_held(1));
  EXPECT_EQ(stop(), 0);
  Session& session = handler.held[0];  // the loop is gone: no race
  EXPECT_FALSE(session.alive());
  EXPECT_EQ(session.event("x", Json::object()), EventOutcome::gone);
  session.reply(Json::object());
  session.fail(errc::kInternal, "nobody hears this");
}

}  // namespace
}  // namespace stackie::ipc::testing
