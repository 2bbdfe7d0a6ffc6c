// The MCP server's resources: each block's log as stackie://STACK/BLOCK/logs (its last lines,
// text/plain), listed from the daemon's ps and read through its `logs`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/mcp_daemon_link.h"
#include "cli/mcp_rpc.h"

namespace stackie::cli::mcp {

inline constexpr std::size_t kResourceLogLines = 500;

struct LogResource {
  std::string stack;
  std::string block;
};
// stackie://STACK/BLOCK/logs -> {STACK, BLOCK}; nullopt for anything else.
std::optional<LogResource> parse_log_uri(std::string_view uri);
std::string log_uri(std::string_view stack, std::string_view block);

RpcOutcome list_log_resources(DaemonLink& daemon);
Json log_resource_templates();
RpcOutcome read_log_resource(DaemonLink& daemon, std::string_view uri);

}  // namespace stackie::cli::mcp
