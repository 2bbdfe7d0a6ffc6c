// get_sandbox_stats: what `stackie stats --no-stream --json` shows, for one block or all. The
// daemon samples only while a request is open, so asking costs one interval of waiting (CPU %
// is the share of that interval) and nothing once answered.
#include <utility>

#include "cli/mcp_tools.h"

namespace stackie::cli::mcp {
namespace {

constexpr int64_t kDefaultIntervalMs = 1000;

ToolAnswer get_sandbox_stats(DaemonLink& daemon, const Json& arguments) {
  Json params = Json::object(
      {{"interval_ms", arguments["interval_ms"].int_or(kDefaultIntervalMs)}, {"follow", false}});
  if (arguments["stack"].is_string() && !arguments["stack"].as_string().empty())
    params.set("stack", arguments["stack"].as_string());
  if (arguments["sandbox"].is_string()) {
    Json blocks = Json::array();
    blocks.push_back(arguments["sandbox"].as_string());
    params.set("blocks", std::move(blocks));
  }
  auto stats = daemon.call("stats", params);
  if (!stats.ok()) return tool_error("stats: " + stats.error().message);
  return tool_json(
      Json::object({{"interval_ms", (*stats)["interval_ms"]}, {"sandboxes", (*stats)["blocks"]}}));
}

}  // namespace

std::vector<Tool> stats_tools() {
  Json properties = block_properties();
  properties.set("interval_ms",
                 Json::object({{"type", "integer"},
                               {"minimum", 100},
                               {"maximum", 10000},
                               {"description", "how long CPU % is measured over (default 1000)"}}));
  return {Tool{"get_sandbox_stats", "Resource use of sandboxes",
               "CPU %, memory, process count, I/O bytes and uptime of one block (sandbox) or of "
               "every block (of one stack), measured over interval_ms.",
               object_schema(std::move(properties), {}), true, false, get_sandbox_stats}};
}

}  // namespace stackie::cli::mcp
