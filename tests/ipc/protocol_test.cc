#include "ipc/protocol.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <string>

namespace stackie::ipc {
namespace {

std::string without_newline(std::string line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  line.pop_back();
  return line;
}

Request decode_ok(std::string_view line) {
  auto decoded = decode_request(line);
  if (auto* rejected = std::get_if<RejectedRequest>(&decoded)) {
    ADD_FAILURE() << line << " rejected: " << rejected->error.message;
    return {};
  }
  return std::get<Request>(decoded);
}

RejectedRequest decode_rejected(std::string_view line) {
  auto decoded = decode_request(line);
  if (std::holds_alternative<Request>(decoded)) {
    ADD_FAILURE() << "accepted: " << line;
    return {};
  }
  return std::get<RejectedRequest>(decoded);
}

TEST(Protocol, EncodesEachMessageShape) {
  Request request{3, "ps", Json::object({{"stack", "shop"}})};
  EXPECT_EQ(without_newline(encode_request(request)),
            R"({"v":1,"id":3,"method":"ps","params":{"stack":"shop"}})");
  EXPECT_EQ(without_newline(encode_event(3, "progress", Json::object({{"block", "db"}}))),
            R"({"v":1,"id":3,"event":"progress","data":{"block":"db"}})");
  EXPECT_EQ(without_newline(encode_result(3, Json::object({{"ok", true}}))),
            R"({"v":1,"id":3,"result":{"ok":true}})");
  EXPECT_EQ(without_newline(encode_error(3, errc::kNotFound, "no block 'x'")),
            R"({"v":1,"id":3,"error":{"code":"not_found","message":"no block 'x'"}})");
  EXPECT_EQ(without_newline(
                encode_error(std::nullopt, errc::kBadRequest, "?", Json::object({{"at", 4}}))),
            R"({"v":1,"id":null,"error":{"code":"bad_request","message":"?","data":{"at":4}}})");
  // Null params/data/result are sent as {} so the other side never meets a null.
  EXPECT_EQ(without_newline(encode_request(Request{1, "daemon.status", Json()})),
            R"({"v":1,"id":1,"method":"daemon.status","params":{}})");
  // Events are written around their data (issue 25): the same text, names escaped.
  EXPECT_EQ(without_newline(encode_event(-2, "o\"dd", Json())),
            R"({"v":1,"id":-2,"event":"o\"dd","data":{}})");
}

TEST(Protocol, RequestRoundTrips) {
  Request sent{42, "logs", Json::object({{"blocks", Json::Array{"db", "api"}}, {"tail", 10}})};
  std::string line = without_newline(encode_request(sent));
  Request received = decode_ok(line);
  EXPECT_EQ(received.id, 42);
  EXPECT_EQ(received.method, "logs");
  EXPECT_EQ(received.params, sent.params);
}

TEST(Protocol, ServerMessagesRoundTrip) {
  auto event = decode_server_message(without_newline(
      encode_event(9, "line", Json::object({{"block", "db"}, {"text", "ready\n"}}))));
  ASSERT_TRUE(event.ok()) << event.error().message;
  const Event& e = std::get<Event>(*event);
  EXPECT_EQ(e.id, 9);
  EXPECT_EQ(e.name, "line");
  EXPECT_EQ(e.data["text"].as_string(), "ready\n");

  auto result = decode_server_message(without_newline(encode_result(9, Json::object({{"n", 1}}))));
  ASSERT_TRUE(result.ok());
  const Reply& r = std::get<Reply>(*result);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.id, 9);
  EXPECT_EQ(r.result()["n"].as_int(), 1);

  Reply failure{std::nullopt,
                RemoteError{"failed", "db did not start", Json::object({{"block", "db"}})}};
  auto error = decode_server_message(without_newline(encode_reply(failure)));
  ASSERT_TRUE(error.ok());
  const Reply& f = std::get<Reply>(*error);
  ASSERT_FALSE(f.ok());
  EXPECT_FALSE(f.id.has_value());
  EXPECT_EQ(f.error().code, "failed");
  EXPECT_EQ(f.error().message, "db did not start");
  EXPECT_EQ(f.error().data["block"].as_string(), "db");
}

TEST(Protocol, RequestParamsAreOptionalAndExtraMembersIgnored) {
  Request bare = decode_ok(R"({"v":1,"id":0,"method":"ps"})");
  EXPECT_TRUE(bare.params.is_object());
  EXPECT_EQ(bare.params.size(), 0u);
  Request null_params = decode_ok(R"({"v":1,"id":-5,"method":"ps","params":null})");
  EXPECT_EQ(null_params.id, -5);
  EXPECT_TRUE(null_params.params.is_object());
  Request extra = decode_ok(R"({"method":"ps","id":1,"v":1,"trace":"abc"})");
  EXPECT_EQ(extra.method, "ps");
}

TEST(Protocol, RejectsEveryMalformedRequestShape) {
  struct Case {
    const char* line;
    std::string_view code;
    bool id_known;
    const char* why;
  };
  const Case cases[] = {
      {"not json", errc::kBadRequest, false, "invalid JSON"},
      {"[1,2]", errc::kBadRequest, false, "JSON object"},
      {"\"text\"", errc::kBadRequest, false, "JSON object"},
      {"null", errc::kBadRequest, false, "JSON object"},
      {R"({"v":1,"method":"ps"})", errc::kBadRequest, false, "\"id\""},
      {R"({"v":1,"id":"7","method":"ps"})", errc::kBadRequest, false, "\"id\""},
      {R"({"v":1,"id":1.5,"method":"ps"})", errc::kBadRequest, false, "\"id\""},
      {R"({"v":1,"id":null,"method":"ps"})", errc::kBadRequest, false, "\"id\""},
      {R"({"id":7,"method":"ps"})", errc::kBadRequest, true, "\"v\""},
      {R"({"v":2,"id":7,"method":"ps"})", errc::kUnsupportedVersion, true, "version 2"},
      {R"({"v":"1","id":7,"method":"ps"})", errc::kUnsupportedVersion, true, "version \"1\""},
      {R"({"v":1,"id":7})", errc::kBadRequest, true, "\"method\""},
      {R"({"v":1,"id":7,"method":""})", errc::kBadRequest, true, "\"method\""},
      {R"({"v":1,"id":7,"method":5})", errc::kBadRequest, true, "\"method\""},
      {R"({"v":1,"id":7,"method":"ps","params":[]})", errc::kBadRequest, true, "\"params\""},
      {R"({"v":1,"id":7,"method":"ps","params":"x"})", errc::kBadRequest, true, "\"params\""},
      {R"({"v":1,"id":7,"id":8,"method":"ps"})", errc::kBadRequest, false, "duplicate key"},
      {R"({"v":1,"id":7,"method":"ps")", errc::kBadRequest, false, "invalid JSON"},
  };
  for (const Case& c : cases) {
    RejectedRequest rejected = decode_rejected(c.line);
    EXPECT_EQ(rejected.error.code, c.code) << c.line;
    EXPECT_EQ(rejected.id.has_value(), c.id_known) << c.line;
    if (c.id_known) {
      EXPECT_EQ(rejected.id.value_or(0), 7) << c.line;
    }
    EXPECT_NE(rejected.error.message.find(c.why), std::string::npos)
        << c.line << " -> " << rejected.error.message;
  }
}

TEST(Protocol, RejectsOversizedAndDeepRequests) {
  JsonLimits limits;
  limits.max_bytes = 64;
  const std::string big =
      R"({"v":1,"id":1,"method":"ps","params":{"x":")" + std::string(100, 'a') + "\"}}";
  auto decoded = decode_request(big, limits);
  ASSERT_TRUE(std::holds_alternative<RejectedRequest>(decoded));
  EXPECT_EQ(std::get<RejectedRequest>(decoded).error.code, errc::kTooLarge);

  const std::string deep = R"({"v":1,"id":1,"method":"ps","params":{"x":)" + std::string(100, '[') +
                           std::string(100, ']') + "}}";
  RejectedRequest rejected = decode_rejected(deep);
  EXPECT_EQ(rejected.error.code, errc::kBadRequest);
  EXPECT_NE(rejected.error.message.find("nesting"), std::string::npos);
}

TEST(Protocol, RejectsEveryMalformedServerMessage) {
  const char* lines[] = {
      "garbage",
      "[]",
      R"({"id":1,"result":{}})",                                    // no v
      R"({"v":2,"id":1,"result":{}})",                              // wrong v
      R"({"v":1,"result":{}})",                                     // no id
      R"({"v":1,"id":"1","result":{}})",                            // id not an integer
      R"({"v":1,"id":null,"result":{}})",                           // a result needs an id
      R"({"v":1,"id":1})",                                          // nothing
      R"({"v":1,"id":1,"result":{},"error":{}})",                   // two outcomes
      R"({"v":1,"id":1,"event":"x","result":{}})",                  // event and result
      R"({"v":1,"id":null,"event":"x","data":{}})",                 // an event needs an id
      R"({"v":1,"id":1,"event":"","data":{}})",                     // empty event name
      R"({"v":1,"id":1,"event":3,"data":{}})",                      // event name not a string
      R"({"v":1,"id":1,"error":"boom"})",                           // error not an object
      R"({"v":1,"id":1,"error":{"message":"m"}})",                  // no code
      R"({"v":1,"id":1,"error":{"code":"","message":"m"}})",        // empty code
      R"({"v":1,"id":1,"error":{"code":"internal"}})",              // no message
      R"({"v":1,"id":1,"error":{"code":"internal","message":1}})",  // message not a string
  };
  for (const char* line : lines) {
    auto decoded = decode_server_message(line);
    ASSERT_FALSE(decoded.ok()) << "accepted: " << line;
    EXPECT_EQ(decoded.error().code, UV_EPROTO) << line;
  }
  JsonLimits limits;
  limits.max_bytes = 8;
  auto big = decode_server_message(R"({"v":1,"id":1,"result":{}})", limits);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, UV_E2BIG);
}

}  // namespace
}  // namespace stackie::ipc
