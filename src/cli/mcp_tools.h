// The MCP server's tools: each a name, a description for the model, the JSON Schema of its
// arguments (published in tools/list and enforced by mcp_schema before the tool runs) and its
// code. The code of each concern is in its own file: mcp_tools.cc (listing, inspecting,
// start/stop/restart/kill, health), mcp_tool_logs.cc (logs and their search), mcp_tool_exec.cc,
// mcp_tool_stats.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "cli/mcp_daemon_link.h"

namespace stackie::cli::mcp {

// What a tool says, before it becomes a CallToolResult: text for the model, the same as a
// JSON object for programs (structuredContent), and whether the call failed.
struct ToolAnswer {
  std::string text;
  Json structured;  // null: none
  bool error = false;
};
ToolAnswer tool_error(std::string message);
// The JSON of a result as both text and structured content.
ToolAnswer tool_json(Json value);
Json call_tool_result(const ToolAnswer& answer);

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema;
  bool read_only = true;
  bool destructive = false;
  ToolAnswer (*run)(DaemonLink& daemon, const Json& arguments) = nullptr;
};

// Every tool, in the order tools/list shows them.
std::vector<Tool> all_tools();
std::vector<Tool> block_tools();  // mcp_tools.cc
std::vector<Tool> log_tools();    // mcp_tool_logs.cc
std::vector<Tool> exec_tools();   // mcp_tool_exec.cc
std::vector<Tool> stats_tools();  // mcp_tool_stats.cc

// {"tools":[...]} entries, and a call by name (nullopt: no such tool). Arguments are checked
// against the schema first; a tool never sees arguments its schema refuses.
Json describe_tools(const std::vector<Tool>& tools);
std::optional<Json> run_tool(const std::vector<Tool>& tools, DaemonLink& daemon,
                             std::string_view name, const Json& arguments);

// --- shared by the tool files ---

// The schema properties every per-block tool takes: "sandbox" (BLOCK, STACK/BLOCK or a
// sandbox id) and optional "stack".
Json block_properties();
// The daemon's {"block","stack"} params from those arguments.
Json block_params(const Json& arguments);
// {"type":"object","properties":...,"required":[...],"additionalProperties":false}
Json object_schema(Json properties, std::vector<std::string> required);

}  // namespace stackie::cli::mcp
