// The JSON-RPC 2.0 layer of the MCP server: one message in, at most one message out. It owns
// the session's lifecycle (initialize and its protocol version negotiation, then
// notifications/initialized) and the methods every MCP server answers (ping, tools/list,
// tools/call, resources/list, resources/templates/list, resources/read); what the tools and
// resources are is the Backend's business. Pure: no I/O, so every malformed input is a unit
// test (tests/cli/mcp_rpc_test.cc).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/json.h"

namespace stackie::cli::mcp {

// The revision this server implements, and the older ones it still answers in (the client
// proposes, the server answers the same version when it knows it, else its latest).
inline constexpr std::string_view kLatestProtocol = "2025-11-25";
std::span<const std::string_view> supported_protocols();
// Whether a revision allows JSON-RPC batches (2025-03-26 only: added then, removed in
// 2025-06-18).
bool protocol_allows_batches(std::string_view revision);

// JSON-RPC's codes, and the one MCP adds for resources.
namespace rpc_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;
}  // namespace rpc_code

struct RpcError {
  int code = rpc_code::kInternalError;
  std::string message;
  Json data;  // null when absent
};
using RpcOutcome = std::variant<Json, RpcError>;

// What the server serves. Arguments are as the client sent them (objects, checked to be
// objects); a tool's own failures are results with isError, never RpcErrors.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Json list_tools() = 0;  // the "tools" array
  // nullopt: no such tool (a protocol error); else the CallToolResult.
  virtual std::optional<Json> call_tool(std::string_view name, const Json& arguments) = 0;
  virtual RpcOutcome list_resources() = 0;                     // {"resources":[...]}
  virtual Json list_resource_templates() = 0;                  // the "resourceTemplates" array
  virtual RpcOutcome read_resource(std::string_view uri) = 0;  // {"contents":[...]}
};

class RpcServer {
 public:
  RpcServer(Backend& backend, std::string server_version)
      : backend_(backend), server_version_(std::move(server_version)) {}

  // One message (a line without its newline) in; the reply line ("\n" included) out, or ""
  // when nothing is to be sent (a notification, a response from the client).
  std::string handle_line(std::string_view line);
  // The reply to a message over the transport's size limit (its id cannot be known).
  std::string oversized_reply() const;

  bool initialized() const { return initialized_; }
  const std::string& protocol() const { return protocol_; }

 private:
  // The reply object for one request or notification (nullopt: send nothing).
  std::optional<Json> handle_message(const Json& message, bool in_batch);
  RpcOutcome dispatch(std::string_view method, const Json& params, bool in_batch);
  RpcOutcome initialize(const Json& params, bool in_batch);
  RpcOutcome call_tool(const Json& params);
  RpcOutcome read_resource(const Json& params);

  Backend& backend_;
  std::string server_version_;
  std::string protocol_;       // negotiated; empty before initialize
  bool initialized_ = false;   // initialize answered
  bool client_ready_ = false;  // notifications/initialized received
};

// {"jsonrpc":"2.0","id":ID,"error":{...}} as one line.
std::string error_line(const Json& id, const RpcError& error);

}  // namespace stackie::cli::mcp
