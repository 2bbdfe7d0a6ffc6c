// The MCP server's JSON-RPC layer and stdio framing (src/cli/mcp_rpc.cc, mcp_transport.cc),
// against a fake backend: what a broken or hostile client can send.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include <string>
#include <vector>

#include "base/json.h"
#include "cli/mcp_rpc.h"
#include "cli/mcp_transport.h"

namespace stackie::cli::mcp {
namespace {

class FakeBackend : public Backend {
 public:
  Json list_tools() override { return Json::array().push_back(Json::object({{"name", "echo"}})); }
  std::optional<Json> call_tool(std::string_view name, const Json& arguments) override {
    calls.push_back(std::string(name));
    if (name != "echo") return std::nullopt;
    return Json::object({{"content", Json::array()}, {"echoed", arguments}, {"isError", false}});
  }
  RpcOutcome list_resources() override { return Json::object({{"resources", Json::array()}}); }
  Json list_resource_templates() override { return Json::array(); }
  RpcOutcome read_resource(std::string_view uri) override {
    return RpcError{rpc_code::kResourceNotFound, "no " + std::string(uri), Json()};
  }
  std::vector<std::string> calls;
};

Json reply_of(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  auto parsed = parse_json(line);
  EXPECT_TRUE(parsed.ok()) << line;
  return parsed.ok() ? *parsed : Json();
}

int error_code(const std::string& line) {
  return static_cast<int>(reply_of(line)["error"]["code"].int_or(0));
}

std::string initialize(RpcServer& server, const std::string& version = "2025-11-25") {
  return server.handle_line(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                            R"("protocolVersion":")" +
                            version +
                            R"(","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
}

TEST(McpRpc, InitializeAnswersTheClientsRevisionAndCapabilities) {
  FakeBackend backend;
  RpcServer server(backend, "9.9");
  Json reply = reply_of(initialize(server));
  EXPECT_EQ(reply["id"], Json(1));
  EXPECT_EQ(reply["jsonrpc"].string_or(""), "2.0");
  EXPECT_EQ(reply["result"]["protocolVersion"].string_or(""), "2025-11-25");
  EXPECT_TRUE(reply["result"]["capabilities"]["tools"].is_object());
  EXPECT_TRUE(reply["result"]["capabilities"]["resources"].is_object());
  EXPECT_EQ(reply["result"]["serverInfo"]["version"].string_or(""), "9.9");
  EXPECT_TRUE(server.initialized());
}

TEST(McpRpc, InitializeWithAnOlderKnownRevisionKeepsIt) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  EXPECT_EQ(reply_of(initialize(server, "2025-06-18"))["result"]["protocolVersion"].string_or(""),
            "2025-06-18");
}

TEST(McpRpc, InitializeWithAnUnknownRevisionAnswersTheLatest) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  EXPECT_EQ(reply_of(initialize(server, "2099-01-01"))["result"]["protocolVersion"].string_or(""),
            std::string(kLatestProtocol));
}

TEST(McpRpc, InitializeTwiceIsRefused) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);
  EXPECT_EQ(error_code(initialize(server)), rpc_code::kInvalidRequest);
}

TEST(McpRpc, InitializeWithoutAVersionIsInvalidParams) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  EXPECT_EQ(error_code(server.handle_line(
                R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})")),
            rpc_code::kInvalidParams);
  EXPECT_FALSE(server.initialized());
}

TEST(McpRpc, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  EXPECT_EQ(error_code(server.handle_line(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})")),
            rpc_code::kInvalidRequest);
  Json ping = reply_of(server.handle_line(R"({"jsonrpc":"2.0","id":"p","method":"ping"})"));
  EXPECT_EQ(ping["id"], Json("p"));
  EXPECT_TRUE(ping["result"].is_object());
}

TEST(McpRpc, MalformedJsonIsAParseErrorWithNullId) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  for (const char* line : {"{", "not json", R"({"jsonrpc":"2.0","id":1,})", "\xff\xfe"}) {
    Json reply = reply_of(server.handle_line(line));
    EXPECT_EQ(reply["error"]["code"].int_or(0), rpc_code::kParseError) << line;
    EXPECT_TRUE(reply.contains("id") && reply["id"].is_null()) << line;
  }
}

TEST(McpRpc, InvalidRequestsAreNamed) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);
  EXPECT_EQ(error_code(server.handle_line("42")), rpc_code::kInvalidRequest);
  EXPECT_EQ(error_code(server.handle_line(R"({"id":3,"method":"ping"})")),
            rpc_code::kInvalidRequest);  // no "jsonrpc"
  EXPECT_EQ(error_code(server.handle_line(R"({"jsonrpc":"1.0","id":3,"method":"ping"})")),
            rpc_code::kInvalidRequest);
  EXPECT_EQ(error_code(server.handle_line(R"({"jsonrpc":"2.0","id":3})")),
            rpc_code::kInvalidRequest);
  EXPECT_EQ(error_code(server.handle_line(R"({"jsonrpc":"2.0","id":3,"method":7})")),
            rpc_code::kInvalidRequest);
  EXPECT_EQ(error_code(server.handle_line(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")),
            rpc_code::kInvalidRequest);
  EXPECT_EQ(error_code(server.handle_line(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})")),
            rpc_code::kInvalidRequest);
  EXPECT_EQ(
      error_code(server.handle_line(R"({"jsonrpc":"2.0","id":3,"method":"ping","params":[]})")),
      rpc_code::kInvalidParams);
}

TEST(McpRpc, UnknownMethodIsMethodNotFoundWithTheRequestsId) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);
  Json reply = reply_of(server.handle_line(R"({"jsonrpc":"2.0","id":"x7","method":"frobnicate"})"));
  EXPECT_EQ(reply["error"]["code"].int_or(0), rpc_code::kMethodNotFound);
  EXPECT_EQ(reply["id"], Json("x7"));
}

TEST(McpRpc, NotificationsAndClientResponsesGetNoAnswer) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);
  EXPECT_EQ(server.handle_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"), "");
  EXPECT_EQ(server.handle_line(R"({"jsonrpc":"2.0","method":"no/such/notification"})"), "");
  EXPECT_EQ(server.handle_line(
                R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})"),
            "");
  EXPECT_EQ(server.handle_line(R"({"jsonrpc":"2.0","id":5,"result":{}})"), "");
}

TEST(McpRpc, BatchesAreRefusedInRevisionsWithoutThem) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);  // 2025-11-25: no batches
  Json reply = reply_of(server.handle_line(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}])"));
  EXPECT_TRUE(reply.is_object());
  EXPECT_EQ(reply["error"]["code"].int_or(0), rpc_code::kInvalidRequest);
  EXPECT_TRUE(reply["id"].is_null());
}

TEST(McpRpc, BatchesAreAnsweredIn20250326) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server, "2025-03-26");
  Json reply = reply_of(server.handle_line(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3,"method":"initialize",)"
      R"("params":{"protocolVersion":"2025-03-26"}}])"));
  ASSERT_TRUE(reply.is_array());
  ASSERT_EQ(reply.size(), 3u);  // the notification has no answer
  EXPECT_TRUE(reply[0]["result"].is_object());
  EXPECT_EQ(reply[1]["error"]["code"].int_or(0), rpc_code::kMethodNotFound);
  EXPECT_EQ(reply[2]["error"]["code"].int_or(0), rpc_code::kInvalidRequest);  // not in a batch
  EXPECT_EQ(error_code(server.handle_line("[]")), rpc_code::kInvalidRequest);
  EXPECT_EQ(server.handle_line(R"([{"jsonrpc":"2.0","method":"notifications/x"}])"), "");
}

TEST(McpRpc, ToolsCallReachesTheBackendAndUnknownToolsAreInvalidParams) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);
  Json reply = reply_of(server.handle_line(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}})"));
  EXPECT_EQ(reply["result"]["echoed"]["a"], Json(1));
  EXPECT_EQ(error_code(server.handle_line(
                R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm"}})")),
            rpc_code::kInvalidParams);
  EXPECT_EQ(error_code(server.handle_line(
                R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}})")),
            rpc_code::kInvalidParams);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"echo", "rm"}));
}

TEST(McpRpc, ResourcesReadOfAnUnknownUriIsResourceNotFound) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  initialize(server);
  EXPECT_EQ(
      error_code(server.handle_line(
          R"({"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file:///etc/passwd"}})")),
      rpc_code::kResourceNotFound);
  EXPECT_EQ(error_code(server.handle_line(
                R"({"jsonrpc":"2.0","id":9,"method":"resources/read","params":{}})")),
            rpc_code::kInvalidParams);
}

TEST(McpTransport, SplitsLinesAcrossChunks) {
  MessageSplitter splitter(64);
  std::vector<std::string> lines;
  int oversized = 0;
  auto on_line = [&](std::string_view line) { lines.emplace_back(line); };
  auto on_big = [&] { ++oversized; };
  splitter.feed("{\"a\":", on_line, on_big);
  splitter.feed("1}\r\n\n{\"b\":2}\n{\"c\"", on_line, on_big);
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(splitter.buffered(), 4u);
  EXPECT_EQ(oversized, 0);
}

TEST(McpTransport, AnOversizedLineIsReportedOnceAndSkippedWithBoundedMemory) {
  MessageSplitter splitter(16);
  std::vector<std::string> lines;
  int oversized = 0;
  auto on_line = [&](std::string_view line) { lines.emplace_back(line); };
  auto on_big = [&] { ++oversized; };
  splitter.feed("ok1\n", on_line, on_big);
  for (int i = 0; i < 1000; ++i) {
    splitter.feed(std::string(100, 'x'), on_line, on_big);
    ASSERT_LE(splitter.buffered(), 16u);
  }
  splitter.feed("tail\nok2\n", on_line, on_big);
  EXPECT_EQ(oversized, 1);
  EXPECT_EQ(lines, (std::vector<std::string>{"ok1", "ok2"}));
}

TEST(McpTransport, TheOversizedReplyIsAnInvalidRequestWithNullId) {
  FakeBackend backend;
  RpcServer server(backend, "1");
  Json reply = reply_of(server.oversized_reply());
  EXPECT_EQ(reply["error"]["code"].int_or(0), rpc_code::kInvalidRequest);
  EXPECT_TRUE(reply["id"].is_null());
}

TEST(McpTransport, ServeLinesAnswersEachMessageAndSurvivesAnOversizedOne) {
  int in[2], out[2];
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(out), 0);
  std::string big(kMaxMessage + 10, 'x');
  std::string input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n" + big + "\n" +
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
  FakeBackend backend;
  RpcServer server(backend, "1");
  std::thread writer([&] {
    ASSERT_TRUE(write_all_to(in[1], input).ok());
    close(in[1]);
  });
  std::string output;
  std::thread reader([&] {
    char buffer[4096];
    ssize_t n;
    while ((n = read(out[0], buffer, sizeof buffer)) > 0) output.append(buffer, n);
  });
  int rc = serve_lines(
      in[0], out[1], [&](std::string_view line) { return server.handle_line(line); },
      [&] { return server.oversized_reply(); });
  close(out[1]);
  writer.join();
  reader.join();
  close(in[0]);
  close(out[0]);
  EXPECT_EQ(rc, 0);
  std::vector<Json> replies;
  for (size_t at = 0, nl; (nl = output.find('\n', at)) != std::string::npos; at = nl + 1)
    replies.push_back(reply_of(output.substr(at, nl - at + 1)));
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0]["id"], Json(1));
  EXPECT_EQ(replies[1]["error"]["code"].int_or(0), rpc_code::kInvalidRequest);
  EXPECT_EQ(replies[2]["id"], Json(2));
}

}  // namespace
}  // namespace stackie::cli::mcp
