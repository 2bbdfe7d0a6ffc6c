// Hostile and broken clients: each gets an error or is dropped, memory stays bounded, and the
// server keeps serving another client afterwards.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "server_fixture.h"

namespace stackie::ipc::testing {
namespace {

using namespace std::chrono_literals;
using GarbageTest = ServerFixture;

// Peak resident memory of this process (the server runs in it), in KiB.
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Reads messages until the server closes; returns the error replies seen.
std::vector<Reply> replies_until_closed(Client& client) {
  std::vector<Reply> replies;
  for (int i = 0; i < 100000; ++i) {
    auto message = client.read_message(5000ms);
    if (!message.ok()) {
      EXPECT_EQ(message.error().code, UV_EOF) << message.error().message;
      break;
    }
    if (auto* reply = std::get_if<Reply>(&*message)) replies.push_back(*reply);
  }
  return replies;
}

TEST_F(GarbageTest, RandomBytesGetErrorsAndTheConnectionSurvives) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  std::mt19937 random(12345);
  std::string garbage(256 * 1024, '\0');
  for (char& byte : garbage) byte = static_cast<char>(random());
  const std::size_t lines =
      static_cast<std::size_t>(std::count(garbage.begin(), garbage.end(), '\n'));
  ASSERT_TRUE(client.send_raw(garbage).ok());
  // The garbage's last line is unfinished: end it, then ask for something real.
  ASSERT_TRUE(client.send_raw("\n").ok());
  auto id = client.send("echo", Json::object({{"after", "garbage"}}));
  ASSERT_TRUE(id.ok());
  std::size_t bad_requests = 0;
  for (;;) {
    auto message = client.read_message(5000ms);
    ASSERT_TRUE(message.ok()) << message.error().message;
    const Reply& reply = std::get<Reply>(*message);
    if (reply.ok()) {
      EXPECT_EQ(reply.id, *id);
      EXPECT_EQ(reply.result()["after"].as_string(), "garbage");
      break;
    }
    EXPECT_EQ(reply.error().code, "bad_request") << reply.error().message;
    EXPECT_FALSE(reply.id.has_value());
    ++bad_requests;
  }
  EXPECT_GT(bad_requests, lines / 2);  // about one error per non-empty line
  std::printf(
      "[ figures  ] 256 KiB of random bytes: %zu newline-separated lines, %zu bad_request "
      "replies, then a valid request answered\n",
      lines, bad_requests);
  expect_served();
}

TEST_F(GarbageTest, AHundredMegabyteLineIsRefusedWithBoundedMemory) {
  ASSERT_TRUE(start().ok());
  const long rss_before = peak_rss_kib();
  Client client = connect();
  const std::string chunk(1 << 20, 'x');
  std::size_t sent = 0;
  Status status;
  for (int i = 0; i < 100; ++i) {  // 100 MiB, no newline
    status = client.send_raw(chunk);
    if (!status.ok()) break;
    sent += chunk.size();
  }
  EXPECT_FALSE(status.ok()) << "the server read 100 MiB of one line";
  if (!status.ok()) {
    EXPECT_EQ(status.error().code, UV_EOF) << status.error().message;
  }
  std::vector<Reply> replies = replies_until_closed(client);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].error().code, "too_large");
  EXPECT_NE(replies[0].error().message.find("1048576"), std::string::npos);
  const long rss_growth_kib = peak_rss_kib() - rss_before;
  EXPECT_LT(rss_growth_kib, 32 * 1024) << "peak memory grew by " << rss_growth_kib << " KiB";
  std::printf(
      "[ figures  ] 100 MiB line: server dropped the client after %zu MiB were accepted "
      "by the socket; peak RSS grew by %ld KiB\n",
      sent >> 20, rss_growth_kib);
  EXPECT_TRUE(eventually([&] { return connection_count() == 0; }));
  expect_served();
  EXPECT_TRUE([&] {
    for (const auto& line : logs())
      if (line.find("longer than the limit") != std::string::npos) return true;
    return false;
  }());
}

TEST_F(GarbageTest, DeepNestingIsRefusedAndTheConnectionSurvives) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  const std::string deep = R"({"v":1,"id":1,"method":"echo","params":{"a":)" +
                           std::string(400000, '[') + std::string(400000, ']') + "}}\n";
  ASSERT_TRUE(client.send_raw(deep).ok());
  auto refusal = client.read_message(5000ms);
  ASSERT_TRUE(refusal.ok()) << refusal.error().message;
  const Reply& reply = std::get<Reply>(*refusal);
  EXPECT_EQ(reply.error().code, "bad_request");
  EXPECT_NE(reply.error().message.find("nesting deeper than 64"), std::string::npos)
      << reply.error().message;
  auto after = client.call("echo", Json::object({{"nested", Json::Array{Json::Array{}}}}));
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->ok());
  expect_served();
}

TEST_F(GarbageTest, HalfARequestThenCloseLeavesNoTrace) {
  ASSERT_TRUE(start().ok());
  for (int i = 0; i < 20; ++i) {
    Client client = connect();
    ASSERT_TRUE(client.send_raw(R"({"v":1,"id":1,"method":"ec)").ok());
  }  // each closes mid-request
  EXPECT_TRUE(eventually([&] { return connection_count() == 0; }));
  std::size_t requests = 99;
  run_on_loop([&] { requests = handler.requests; });
  EXPECT_EQ(requests, 0u);  // nothing half-read reached the handler
  expect_served();
}

TEST_F(GarbageTest, MalformedRequestsOnOneConnectionEachGetTheirError) {
  ASSERT_TRUE(start().ok());
  Client client = connect();
  std::string lines =
      "{}\n"
      "[]\n"
      "{\"v\":9,\"id\":4,\"method\":\"ps\"}\n"
      "{\"v\":1,\"id\":5}\n"
      "{\"v\":1,\"id\":6,\"method\":\"ps\",\"params\":7}\n"
      "{\"v\":1,\"id\":7,\"method\":\"echo\",\"params\":{\"t\":\"\xff\"}}\n";
  lines += std::string("\0\x01\x02\n", 4);  // NUL bytes: a C-string parser would stop early
  ASSERT_TRUE(client.send_raw(lines).ok());
  const std::pair<std::optional<RequestId>, std::string> expected[] = {
      {std::nullopt, "bad_request"},
      {std::nullopt, "bad_request"},
      {4, "unsupported_version"},
      {5, "bad_request"},
      {6, "bad_request"},
      {std::nullopt, "bad_request"},
      {std::nullopt, "bad_request"},
  };
  for (const auto& [id, code] : expected) {
    auto message = client.read_message(5000ms);
    ASSERT_TRUE(message.ok()) << message.error().message;
    const Reply& reply = std::get<Reply>(*message);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.id, id);
    EXPECT_EQ(reply.error().code, code) << reply.error().message;
  }
  expect_served();
}

TEST_F(GarbageTest, ManyGarbageClientsAtOnceDoNotStopOthers) {
  ASSERT_TRUE(start().ok());
  std::vector<std::thread> vandals;
  for (int t = 0; t < 8; ++t) {
    vandals.emplace_back([&, t] {
      auto client = Client::connect(socket_path, quick());
      if (!client.ok()) return;
      std::mt19937 random(static_cast<unsigned>(t));
      std::string junk(2 << 20, '\0');  // 2 MiB: some lines overlong, most garbage
      for (char& byte : junk) byte = static_cast<char>(random() % 4 == 0 ? '{' : random());
      (void)client->send_raw(junk);
      while (client->read_message(2000ms).ok()) {
      }
    });
  }
  for (int i = 0; i < 20; ++i) expect_served();
  for (auto& thread : vandals) thread.join();
  EXPECT_TRUE(eventually([&] { return connection_count() == 0; }));
  expect_served();
}

}  // namespace
}  // namespace stackie::ipc::testing
