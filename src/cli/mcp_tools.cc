// The tools about blocks as a whole: list, inspect, start/stop/restart/kill, health and its
// summary; and what every tool shares (schemas, results, running one by name).
#include "cli/mcp_tools.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "base/posix_io.h"
#include "cli/cli_args.h"
#include "cli/mcp_log_search.h"
#include "cli/mcp_schema.h"

namespace stackie::cli::mcp {

ToolAnswer tool_error(std::string message) {
  return ToolAnswer{std::move(message), Json(), true};
}

ToolAnswer tool_json(Json value) {
  std::string text = to_json(value);
  return ToolAnswer{std::move(text), std::move(value), false};
}

Json call_tool_result(const ToolAnswer& answer) {
  Json content = Json::array();
  content.push_back(Json::object({{"type", "text"}, {"text", answer.text}}));
  Json result = Json::object({{"content", std::move(content)}});
  if (answer.structured.is_object()) result.set("structuredContent", answer.structured);
  result.set("isError", answer.error);
  return result;
}

Json object_schema(Json properties, std::vector<std::string> required) {
  Json schema = Json::object({{"type", "object"}, {"properties", std::move(properties)}});
  if (!required.empty()) {
    Json names = Json::array();
    for (auto& name : required) names.push_back(std::move(name));
    schema.set("required", std::move(names));
  }
  schema.set("additionalProperties", false);
  return schema;
}

Json block_properties() {
  return Json::object({
      {"sandbox", Json::object({{"type", "string"},
                                {"minLength", 1},
                                {"maxLength", 256},
                                {"description",
                                 "the block: BLOCK, STACK/BLOCK or its sandbox id (see "
                                 "list_sandboxes)"}})},
      {"stack", Json::object({{"type", "string"},
                              {"maxLength", 256},
                              {"description",
                               "the stack, when several have a block of "
                               "that name"}})},
  });
}

Json block_params(const Json& arguments) {
  Json params = Json::object({{"block", arguments["sandbox"].string_or("")}});
  if (arguments["stack"].is_string() && !arguments["stack"].as_string().empty())
    params.set("stack", arguments["stack"].as_string());
  return params;
}

std::vector<Tool> all_tools() {
  std::vector<Tool> tools = block_tools();
  for (auto* more : {&log_tools, &exec_tools, &stats_tools})
    for (auto& tool : more()) tools.push_back(std::move(tool));
  return tools;
}

Json describe_tools(const std::vector<Tool>& tools) {
  Json list = Json::array();
  for (const Tool& tool : tools)
    list.push_back(Json::object({
        {"name", tool.name},
        {"title", tool.title},
        {"description", tool.description},
        {"inputSchema", tool.input_schema},
        {"annotations", Json::object({{"title", tool.title},
                                      {"readOnlyHint", tool.read_only},
                                      {"destructiveHint", tool.destructive},
                                      {"openWorldHint", false}})},
    }));
  return list;
}

std::optional<Json> run_tool(const std::vector<Tool>& tools, DaemonLink& daemon,
                             std::string_view name, const Json& arguments) {
  for (const Tool& tool : tools) {
    if (tool.name != name) continue;
    if (auto checked = check_schema(tool.input_schema, arguments); !checked.ok())
      return call_tool_result(tool_error(tool.name + ": " + checked.error().message));
    return call_tool_result(tool.run(daemon, arguments));
  }
  return std::nullopt;
}

namespace {

ToolAnswer list_sandboxes(DaemonLink& daemon, const Json& arguments) {
  Json params = Json::object();
  if (arguments["stack"].is_string()) params.set("stack", arguments["stack"].as_string());
  auto ps = daemon.call("ps", params);
  if (!ps.ok()) return tool_error(ps.error().message);
  return tool_json(Json::object({{"sandboxes", (*ps)["blocks"]}}));
}

ToolAnswer inspect_sandbox(DaemonLink& daemon, const Json& arguments) {
  auto status = daemon.call("status", block_params(arguments));
  if (!status.ok()) return tool_error(status.error().message);
  return tool_json((*status)["block"]);
}

// start, stop and restart wait until the block is where they put it (running and healthy
// when it has a check, or stopped), so the answer is the block's new row.
ToolAnswer block_action(DaemonLink& daemon, const Json& arguments, const char* method) {
  Json params = block_params(arguments);
  params.set("wait", arguments["wait"].bool_or(true));
  auto done = daemon.call(method, params);
  if (!done.ok()) return tool_error(std::string(method) + ": " + done.error().message);
  return tool_json(Json::object({{"sandbox", (*done)["block"]}}));
}

ToolAnswer start_sandbox(DaemonLink& daemon, const Json& arguments) {
  return block_action(daemon, arguments, "start");
}
ToolAnswer stop_sandbox(DaemonLink& daemon, const Json& arguments) {
  return block_action(daemon, arguments, "stop");
}
ToolAnswer restart_sandbox(DaemonLink& daemon, const Json& arguments) {
  return block_action(daemon, arguments, "restart");
}

// kill: a signal to every process of the block now, with no grace period (SIGKILL unless one
// is named). The restart policy then decides, as for any other exit.
ToolAnswer kill_sandbox(DaemonLink& daemon, const Json& arguments) {
  Json params = block_params(arguments);
  if (arguments["signal"].is_string()) params.set("signal", arguments["signal"].as_string());
  auto done = daemon.call("kill", params);
  if (!done.ok()) return tool_error("kill: " + done.error().message);
  return tool_json(Json::object({{"sandbox", (*done)["block"]}}));
}

Json health_of(const Json& block) {
  return Json::object({{"stack", block["stack"]},
                       {"name", block["name"]},
                       {"state", block["state"]},
                       {"health", block["health"]},
                       {"has_health_check", block["health"].string_or("none") != "none"},
                       {"last_health", block["last_health"]},
                       {"last_exit", block["last_exit"]},
                       {"restarts", block["restarts"]},
                       {"uptime_s", block["uptime_s"]},
                       {"message", block["message"]}});
}

ToolAnswer get_health_status(DaemonLink& daemon, const Json& arguments) {
  auto status = daemon.call("status", block_params(arguments));
  if (!status.ok()) return tool_error(status.error().message);
  return tool_json(health_of((*status)["block"]));
}

// Whether something accepts TCP connections on 127.0.0.1:PORT within half a second.
bool port_reachable(int port) {
  int fd = socket_cloexec(AF_INET, SOCK_STREAM, /*nonblock=*/true);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    ok = ::poll(&p, 1, 500) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
         error == 0;
  }
  ::close(fd);
  return ok;
}

std::string clipped(std::string text, std::size_t most) {
  if (text.size() <= most) return text;
  text.resize(most);
  return text + "...";
}

// A few hundred bytes a model can read at a glance: state and health, uptime, restarts, each
// port and whether it answers, the last error lines.
ToolAnswer summarise_sandbox_health(DaemonLink& daemon, const Json& arguments) {
  auto status = daemon.call("status", block_params(arguments));
  if (!status.ok()) return tool_error(status.error().message);
  const Json& block = (*status)["block"];
  std::string name = block["stack"].string_or("") + "/" + block["name"].string_or("");
  std::string text = name + ": " + block["state"].string_or("?");
  if (block["health"].string_or("none") != "none") text += ", " + block["health"].as_string();
  if (block["uptime_s"].is_int()) text += ", up " + format_uptime(block["uptime_s"]);
  text += ", " + std::to_string(block["restarts"].int_or(0)) + " restart(s)";
  Json ports = Json::array();
  for (const Json& port : block["ports"].is_array() ? block["ports"].as_array() : Json::Array{}) {
    std::string host = port["host"].string_or("");
    int number = std::atoi(host.substr(host.rfind(':') + 1).c_str());
    bool reachable = number > 0 && port_reachable(number);
    text += "; port " + port["name"].string_or("?") + " " + host +
            (reachable ? " reachable" : " NOT reachable");
    ports.push_back(
        Json::object({{"name", port["name"]}, {"host", host}, {"reachable", reachable}}));
  }
  if (block["last_health"].is_object() && !block["last_health"]["ok"].bool_or(true))
    text += "; last check failed: " + clipped(block["last_health"]["message"].string_or(""), 80);
  if (block["last_exit"].is_object())
    text += "; last exit: " + clipped(block["last_exit"]["message"].string_or(""), 60);
  // The last error lines of its log (a guess from the words they start with).
  std::vector<LogEntry> lines;
  Json logs_params = Json::object({{"blocks", Json::array().push_back(name)}, {"tail", 2000}});
  auto logs = daemon.call("logs", logs_params, [&](const ipc::Event& event) {
    if (event.name == "line") lines.push_back(log_entry_from_event(event.data));
  });
  Json errors = Json::array();
  for (auto it = lines.rbegin(); it != lines.rend() && errors.size() < 2; ++it)
    if (it->level >= LogLevel::error) errors.push_back(clipped(it->text, 100));
  text += errors.size() == 0 ? "; no error lines" : "; last errors:";
  for (std::size_t i = errors.size(); i-- > 0;) text += " [" + errors.at(i).as_string() + "]";
  Json summary = Json::object({{"sandbox", name},
                               {"state", block["state"]},
                               {"health", block["health"]},
                               {"uptime_s", block["uptime_s"]},
                               {"restarts", block["restarts"]},
                               {"ports", std::move(ports)},
                               {"last_errors", std::move(errors)},
                               {"summary", text}});
  return ToolAnswer{std::move(text), std::move(summary), false};
}

Json with(Json properties, std::string name, Json schema) {
  properties.set(std::move(name), std::move(schema));
  return properties;
}

}  // namespace

std::vector<Tool> block_tools() {
  Json wait = Json::object(
      {{"type", "boolean"},
       {"description", "wait until the block is there (default true); false answers at once"}});
  Json block_schema = object_schema(block_properties(), {"sandbox"});
  Json action_schema = object_schema(with(block_properties(), "wait", wait), {"sandbox"});
  Json signal = Json::object({{"type", "string"},
                              {"minLength", 1},
                              {"maxLength", 16},
                              {"description",
                               "a signal name or number: SIGTERM, TERM, 15 "
                               "(default SIGKILL)"}});
  return {
      Tool{"list_sandboxes", "List sandboxes",
           "Every block of the user's stacks (or of one stack) with its sandbox id, state, "
           "health, pid, uptime, restarts and ports.",
           object_schema(
               Json::object({{"stack", Json::object({{"type", "string"},
                                                     {"maxLength", 256},
                                                     {"description", "only this stack"}})}}),
               {}),
           true, false, list_sandboxes},
      Tool{"inspect_sandbox", "Inspect a sandbox",
           "One block in full: its row, restart policy, sandbox policy (secrets masked), paths, "
           "last exit, last health check, limits and usage.",
           block_schema, true, false, inspect_sandbox},
      Tool{"start_sandbox", "Start a sandbox", "Start a stopped block.", action_schema, false,
           false, start_sandbox},
      Tool{"stop_sandbox", "Stop a sandbox",
           "Stop a block (SIGTERM, then SIGKILL after its grace period); it stays stopped.",
           action_schema, false, true, stop_sandbox},
      Tool{"restart_sandbox", "Restart a sandbox",
           "Stop and start a block again; with wait (the default) the answer comes once it runs "
           "(and is healthy when it has a check), with its new pid.",
           action_schema, false, true, restart_sandbox},
      Tool{"kill_sandbox", "Kill a sandbox",
           "Send a signal (SIGKILL unless named) to every process of a block at once, with no "
           "grace period; its restart policy then decides whether it runs again.",
           object_schema(with(block_properties(), "signal", signal), {"sandbox"}), false, true,
           kill_sandbox},
      Tool{"get_health_status", "Health of a sandbox",
           "A block's state and health, its last health check and last exit.", block_schema, true,
           false, get_health_status},
      Tool{"summarise_sandbox_health", "Summarise a sandbox's health",
           "A few hundred bytes on a block: status, uptime, restarts, whether its ports answer, "
           "its last error lines.",
           block_schema, true, false, summarise_sandbox_health},
  };
}

}  // namespace stackie::cli::mcp
