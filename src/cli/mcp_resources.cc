#include "cli/mcp_resources.h"

namespace stackie::cli::mcp {

namespace {

constexpr std::string_view kScheme = "stackie://";
constexpr std::string_view kLogsSuffix = "/logs";

// Stack and block names are words of the stack file (stackie-stack(5)); the URI keeps them as
// they are and refuses anything that would make it ambiguous.
bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char c : name)
    if (c == '/' || c == '?' || c == '#' || c == '%' || static_cast<unsigned char>(c) <= ' ')
      return false;
  return true;
}

RpcError not_found(std::string_view uri, std::string message) {
  return RpcError{rpc_code::kResourceNotFound, std::move(message),
                  Json::object({{"uri", std::string(uri)}})};
}

}  // namespace

std::optional<LogResource> parse_log_uri(std::string_view uri) {
  if (!uri.starts_with(kScheme) || !uri.ends_with(kLogsSuffix)) return std::nullopt;
  std::string_view middle =
      uri.substr(kScheme.size(), uri.size() - kScheme.size() - kLogsSuffix.size());
  auto slash = middle.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view stack = middle.substr(0, slash), block = middle.substr(slash + 1);
  if (!plain_name(stack) || !plain_name(block)) return std::nullopt;
  return LogResource{std::string(stack), std::string(block)};
}

std::string log_uri(std::string_view stack, std::string_view block) {
  return std::string(kScheme) + std::string(stack) + "/" + std::string(block) +
         std::string(kLogsSuffix);
}

RpcOutcome list_log_resources(DaemonLink& daemon) {
  auto ps = daemon.call("ps", Json::object());
  if (!ps.ok()) return RpcError{rpc_code::kInternalError, ps.error().message, Json()};
  Json resources = Json::array();
  const Json& blocks = (*ps)["blocks"];
  for (const Json& row : blocks.is_array() ? blocks.as_array() : Json::Array{}) {
    std::string stack = row["stack"].string_or(""), block = row["name"].string_or("");
    if (!plain_name(stack) || !plain_name(block)) continue;
    resources.push_back(Json::object(
        {{"uri", log_uri(stack, block)},
         {"name", stack + "/" + block + " logs"},
         {"title", "Logs of " + stack + "/" + block},
         {"description", "the last " + std::to_string(kResourceLogLines) +
                             " lines of the block's stdout and stderr (the block's own output)"},
         {"mimeType", "text/plain"}}));
  }
  return Json::object({{"resources", std::move(resources)}});
}

Json log_resource_templates() {
  Json templates = Json::array();
  templates.push_back(Json::object({{"uriTemplate", "stackie://{stack}/{block}/logs"},
                                    {"name", "block logs"},
                                    {"title", "Logs of a block"},
                                    {"description", "the last lines of a block's log"},
                                    {"mimeType", "text/plain"}}));
  return templates;
}

RpcOutcome read_log_resource(DaemonLink& daemon, std::string_view uri) {
  auto target = parse_log_uri(uri);
  if (!target)
    return not_found(uri, "no such resource: " + std::string(uri) +
                              " (resources are stackie://STACK/BLOCK/logs)");
  std::string text;
  Json params = Json::object({{"stack", target->stack},
                              {"blocks", Json::array().push_back(target->block)},
                              {"tail", static_cast<int64_t>(kResourceLogLines)}});
  auto done = daemon.call("logs", params, [&](const ipc::Event& event) {
    if (event.name != "line") return;
    text += event.data["ts"].string_or("") + " " + event.data["stream"].string_or("") + " " +
            event.data["text"].string_or("") + "\n";
  });
  if (!done.ok()) return not_found(uri, done.error().message);
  Json contents = Json::array();
  contents.push_back(Json::object(
      {{"uri", std::string(uri)}, {"mimeType", "text/plain"}, {"text", std::move(text)}}));
  return Json::object({{"contents", std::move(contents)}});
}

}  // namespace stackie::cli::mcp
