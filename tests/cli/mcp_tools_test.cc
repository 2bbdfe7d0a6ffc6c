// The MCP tools against a fake daemon (src/cli/mcp_tools.cc and friends): every schema is one
// the checker enforces, bad arguments are tool errors that never reach the daemon, and the
// log search's matching, context and levels.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/mcp_log_search.h"
#include "cli/mcp_resources.h"
#include "cli/mcp_schema.h"
#include "cli/mcp_tools.h"

namespace stackie::cli::mcp {
namespace {

class FakeDaemon : public DaemonLink {
 public:
  Result<Json> call(std::string_view method, const Json& params, const OnEvent& on_event) override {
    methods.push_back(std::string(method));
    last_params = params;
    if (method == "logs")
      for (const auto& text : log_lines)
        if (on_event)
          on_event(ipc::Event{
              1, "line",
              Json::object(
                  {{"ts", "2026-12-02T10:00:00Z"}, {"stream", "stdout"}, {"text", text}})});
    if (method == "ps")
      return Json::object({{"blocks", Json::array().push_back(
                                          Json::object({{"stack", "demo"}, {"name", "web"}}))}});
    return Json::object();
  }
  std::vector<std::string> methods;
  std::vector<std::string> log_lines;
  Json last_params;
};

Json call(const std::vector<Tool>& tools, FakeDaemon& daemon, std::string_view name,
          const std::string& arguments) {
  auto parsed = parse_json(arguments);
  EXPECT_TRUE(parsed.ok()) << arguments;
  auto result = run_tool(tools, daemon, name, *parsed);
  EXPECT_TRUE(result.has_value()) << name;
  return result ? *result : Json();
}

TEST(McpTools, EveryToolIsListedWithASchemaTheCheckerKnows) {
  auto tools = all_tools();
  std::vector<std::string> names;
  for (const Tool& tool : tools) {
    names.push_back(tool.name);
    EXPECT_EQ(unknown_schema_keyword(tool.input_schema), "") << tool.name;
    EXPECT_EQ(tool.input_schema["type"].string_or(""), "object") << tool.name;
    EXPECT_FALSE(tool.description.empty()) << tool.name;
  }
  for (const char* wanted :
       {"list_sandboxes", "inspect_sandbox", "start_sandbox", "stop_sandbox", "restart_sandbox",
        "kill_sandbox", "get_sandbox_logs", "exec_in_sandbox", "search_sandbox_logs",
        "get_sandbox_stats", "get_health_status", "summarise_sandbox_health"})
    EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;
  EXPECT_EQ(describe_tools(tools).size(), tools.size());
}

TEST(McpTools, BadArgumentsAreToolErrorsAndNeverReachTheDaemon) {
  auto tools = all_tools();
  FakeDaemon daemon;
  struct Case {
    const char* tool;
    const char* arguments;
    const char* says;
  };
  for (const Case& c : {
           Case{"inspect_sandbox", "{}", "sandbox: is required"},
           Case{"inspect_sandbox", R"({"sandbox":7})", "sandbox: must be a string"},
           Case{"inspect_sandbox", R"({"sandbox":""})", "sandbox: must not be empty"},
           Case{"inspect_sandbox", R"({"sandbox":"web","rm":true})", "rm: is not an argument"},
           Case{"inspect_sandbox", "[1,2]", "arguments: must be an object"},
           Case{"exec_in_sandbox", R"({"sandbox":"web"})", "argv: is required"},
           Case{"exec_in_sandbox", R"({"sandbox":"web","argv":[]})", "argv: must have at least"},
           Case{"exec_in_sandbox", R"({"sandbox":"web","argv":["ls",3]})",
                "argv[1]: must be a string"},
           Case{"exec_in_sandbox", R"({"sandbox":"web","argv":["ls"],"timeout_s":301})",
                "timeout_s: must be at most 300"},
           Case{"exec_in_sandbox", R"({"sandbox":"web","argv":["ls"],"timeout_s":0})",
                "timeout_s: must be at least 1"},
           Case{"exec_in_sandbox", R"({"sandbox":"web","argv":["ls"],"timeout_s":1.5})",
                "timeout_s: must be an integer"},
           Case{"get_sandbox_logs", R"({"sandbox":"web","stream":"stdin"})",
                "stream: must be one of"},
           Case{"search_sandbox_logs", R"({"sandbox":"web"})", "pattern: is required"},
           Case{"search_sandbox_logs", R"({"sandbox":"web","pattern":"x","context":99})",
                "context: must be at most 20"},
           Case{"search_sandbox_logs", R"({"sandbox":"web","pattern":"x","level":"loud"})",
                "level: must be one of"},
           Case{"kill_sandbox", R"({"sandbox":"web","signal":""})", "signal: must not be empty"},
           Case{"kill_sandbox", R"({"signal":"TERM"})", "sandbox: is required"},
           Case{"get_sandbox_stats", R"({"interval_ms":50})", "interval_ms: must be at least 100"},
           Case{"get_sandbox_stats", R"({"sandbox":"web","follow":true})",
                "follow: is not an argument"},
       }) {
    Json result = call(tools, daemon, c.tool, c.arguments);
    EXPECT_TRUE(result["isError"].bool_or(false)) << c.tool << " " << c.arguments;
    std::string text = result["content"][0]["text"].string_or("");
    EXPECT_NE(text.find(c.says), std::string::npos) << text;
  }
  EXPECT_TRUE(daemon.methods.empty());
}

TEST(McpTools, AnUnknownToolIsNotRun) {
  auto tools = all_tools();
  FakeDaemon daemon;
  EXPECT_FALSE(run_tool(tools, daemon, "format_disk", Json::object()).has_value());
}

TEST(McpTools, SinceThatIsNoTimeIsAToolError) {
  auto tools = all_tools();
  FakeDaemon daemon;
  Json result =
      call(tools, daemon, "get_sandbox_logs", R"({"sandbox":"web","since":"yesterdayish"})");
  EXPECT_TRUE(result["isError"].bool_or(false));
  EXPECT_TRUE(daemon.methods.empty());
}

TEST(McpTools, LogsAskTheDaemonForTheBlockAndStream) {
  auto tools = all_tools();
  FakeDaemon daemon;
  daemon.log_lines = {"one", "two"};
  Json result = call(tools, daemon, "get_sandbox_logs",
                     R"({"sandbox":"demo/web","tail":5,"stream":"stderr","since":"5m"})");
  EXPECT_FALSE(result["isError"].bool_or(true));
  EXPECT_EQ(daemon.last_params["blocks"][0], Json("demo/web"));
  EXPECT_EQ(daemon.last_params["tail"], Json(5));
  EXPECT_EQ(daemon.last_params["streams"][0], Json("stderr"));
  EXPECT_TRUE(daemon.last_params["since"].is_int());
  EXPECT_EQ(result["structuredContent"]["count"], Json(2));
  EXPECT_NE(result["content"][0]["text"].string_or("").find("stdout two"), std::string::npos);
}

TEST(McpTools, KillSendsTheNamedSignalOrNoneForTheDaemonsDefault) {
  auto tools = all_tools();
  FakeDaemon daemon;
  Json result = call(tools, daemon, "kill_sandbox", R"({"sandbox":"web","signal":"TERM"})");
  EXPECT_FALSE(result["isError"].bool_or(true)) << to_json(result);
  ASSERT_EQ(daemon.methods, std::vector<std::string>{"kill"});
  EXPECT_EQ(daemon.last_params["block"].string_or(""), "web");
  EXPECT_EQ(daemon.last_params["signal"].string_or(""), "TERM");
  call(tools, daemon, "kill_sandbox", R"({"sandbox":"shop/web"})");
  EXPECT_TRUE(daemon.last_params["signal"].is_null());  // the daemon's default: SIGKILL
}

TEST(McpTools, StatsAskOnceForOneBlockOrEvery) {
  auto tools = all_tools();
  FakeDaemon daemon;
  call(tools, daemon, "get_sandbox_stats", R"({"sandbox":"web","interval_ms":200})");
  ASSERT_EQ(daemon.methods, std::vector<std::string>{"stats"});
  EXPECT_EQ(to_json(daemon.last_params["blocks"]), R"(["web"])");
  EXPECT_EQ(daemon.last_params["interval_ms"].int_or(0), 200);
  EXPECT_FALSE(daemon.last_params["follow"].bool_or(true));  // one answer, never a stream
  call(tools, daemon, "get_sandbox_stats", R"({"stack":"shop"})");
  EXPECT_TRUE(daemon.last_params["blocks"].is_null());
  EXPECT_EQ(daemon.last_params["stack"].string_or(""), "shop");
  EXPECT_EQ(daemon.last_params["interval_ms"].int_or(0), 1000);
}

TEST(McpTools, AnInvalidRegexIsAToolError) {
  auto tools = all_tools();
  FakeDaemon daemon;
  daemon.log_lines = {"x"};
  Json result = call(tools, daemon, "search_sandbox_logs",
                     R"({"sandbox":"web","pattern":"(unclosed","regex":true})");
  EXPECT_TRUE(result["isError"].bool_or(false));
  EXPECT_NE(result["content"][0]["text"].string_or("").find("regular expression"),
            std::string::npos);
}

std::vector<LogEntry> entries(std::vector<std::string> texts) {
  std::vector<LogEntry> out;
  for (auto& text : texts) {
    LogLevel level = classify_log_line(text);  // as the daemon reads each line
    out.push_back(LogEntry{"t", "stdout", std::move(text), level});
  }
  return out;
}

TEST(McpLogSearch, SubstringWithContext) {
  auto lines = entries({"a", "b", "needle 1", "c", "d", "e", "needle 2"});
  SearchQuery query;
  query.pattern = "needle";
  query.context = 1;
  auto found = search_log(lines, query);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)["total_matches"], Json(2));
  const Json& first = (*found)["matches"][0];
  EXPECT_EQ(first["index"], Json(2));
  EXPECT_EQ(first["before"][0]["text"], Json("b"));
  EXPECT_EQ(first["after"][0]["text"], Json("c"));
  EXPECT_EQ((*found)["matches"][1]["after"].size(), 0u);  // the last line has nothing after
  std::string text = search_text(*found);
  EXPECT_NE(text.find("2: t stdout needle 1"), std::string::npos) << text;
  EXPECT_NE(text.find("1- t stdout b"), std::string::npos) << text;
}

TEST(McpLogSearch, RegexIgnoreCaseAndTheMatchCap) {
  auto lines = entries({"GET /a 200", "get /b 404", "POST /c 500", "GET /d 503"});
  SearchQuery query;
  query.pattern = "^get .* (4|5)[0-9]{2}$";
  query.regex = true;
  query.ignore_case = true;
  query.max_matches = 1;
  auto found = search_log(lines, query);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)["total_matches"], Json(2));
  EXPECT_EQ((*found)["shown"], Json(1));
  EXPECT_EQ((*found)["truncated"], Json(true));
  EXPECT_EQ((*found)["matches"][0]["text"], Json("get /b 404"));
}

TEST(McpLogSearch, TheLevelFilterKeepsLinesAtLeastThatSevere) {
  auto lines = entries({"INFO up", "WARN slow", "ERROR down", "FATAL: gone", "plain"});
  SearchQuery query;
  query.pattern = " ";
  query.min_level = LogLevel::warn;
  auto found = search_log(lines, query);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)["total_matches"], Json(3));
  EXPECT_EQ((*found)["matches"][2]["level"], Json("fatal"));
}

TEST(McpLogSearch, TheDaemonsLevelIsTakenAsItSaysIt) {
  Json data = Json::object({{"ts", "t"}, {"stream", "stdout"}, {"level", "warn"}, {"text", "x"}});
  EXPECT_EQ(log_entry_from_event(data).level, LogLevel::warn);
  data.set("level", Json());  // the daemon read no level: the text is not read again
  data.set("text", "ERROR but unknown to the daemon");
  EXPECT_EQ(log_entry_from_event(data).level, LogLevel::unknown);
  Json old = Json::object({{"ts", "t"}, {"stream", "stdout"}, {"text", "ERROR from an old one"}});
  EXPECT_EQ(log_entry_from_event(old).level, LogLevel::error);
}

TEST(McpLogSearch, AHostileLineOfAMegabyteIsSearchedBounded) {
  std::string huge(1 << 20, 'a');
  auto lines = entries({huge + "needle"});
  SearchQuery query;
  query.pattern = "(a|aa)*needle";
  query.regex = true;
  auto found = search_log(lines, query);
  ASSERT_TRUE(found.ok());
  // Only the first kMatchedBytes are looked at: the needle past them is not found.
  EXPECT_EQ((*found)["total_matches"], Json(0));
}

TEST(McpResources, LogUrisRoundTripAndOthersAreRefused) {
  auto parsed = parse_log_uri(log_uri("demo", "web"));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->stack, "demo");
  EXPECT_EQ(parsed->block, "web");
  for (const char* uri :
       {"stackie://demo/logs", "stackie://demo/web/../x/logs", "file:///etc/passwd",
        "stackie:///web/logs", "stackie://demo/web/log", "stackie://de%2fmo/web/logs"})
    EXPECT_FALSE(parse_log_uri(uri).has_value()) << uri;
}

}  // namespace
}  // namespace stackie::cli::mcp
