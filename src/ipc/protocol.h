// The wire protocol shared by the CLI and the daemon (DESIGN.md §7; documented for users in
// stackie-ipc(7) and docs/ipc.md). Every message is one JSON object on one line, with "v":1:
//
//   request  {"v":1,"id":N,"method":"ps","params":{...}}
//   event    {"v":1,"id":N,"event":"progress","data":{...}}       0..n per request, then
//   reply    {"v":1,"id":N,"result":{...}}
//         or {"v":1,"id":N,"error":{"code":"not_found","message":"...","data":{...}}}
//
// A reply to a line whose id could not be read carries "id":null. Encoders never fail; decoders
// check every field.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "base/error.h"
#include "base/json.h"

namespace stackie::ipc {

inline constexpr int kProtocolVersion = 1;

using RequestId = std::int64_t;

// Stable error codes (part of the protocol: clients branch on them, never on messages).
namespace errc {
// Not a valid request: not JSON, not an object, a field missing or of the wrong type.
inline constexpr std::string_view kBadRequest = "bad_request";
// "v" is present but not 1.
inline constexpr std::string_view kUnsupportedVersion = "unsupported_version";
inline constexpr std::string_view kUnknownMethod = "unknown_method";
// A param is missing or of the wrong type.
inline constexpr std::string_view kInvalidParams = "invalid_params";
// No such stack or block.
inline constexpr std::string_view kNotFound = "not_found";
// A limit (connections, pending requests) or a conflicting operation in progress.
inline constexpr std::string_view kBusy = "busy";
// A line over the size limit (the connection then closes).
inline constexpr std::string_view kTooLarge = "too_large";
// The stack file does not load (message: FILE:LINE:COL: ...).
inline constexpr std::string_view kInvalidStack = "invalid_stack";
// The operation ran and failed, e.g. a block did not start (data names it).
inline constexpr std::string_view kFailed = "failed";
// The peer runs as another uid.
inline constexpr std::string_view kPermissionDenied = "permission_denied";
// The daemon is stopping.
inline constexpr std::string_view kShuttingDown = "shutting_down";
inline constexpr std::string_view kInternal = "internal";
}  // namespace errc

struct Request {
  RequestId id = 0;
  std::string method;
  Json params = Json::object();  // always an object ({} when the request had none)
};

// What an error reply carries. `data` is optional detail (null when absent), e.g. for `failed`:
// {"block":"db","log_tail":["..."]}.
struct RemoteError {
  std::string code;
  std::string message;
  Json data;
};

struct Event {
  RequestId id = 0;
  std::string name;  // "progress", "line", "skipped", ...
  Json data = Json::object();
};

// The final message for a request: a result or an error.
struct Reply {
  std::optional<RequestId> id;  // nullopt only for "id":null (the request was unreadable)
  std::variant<Json, RemoteError> outcome;

  bool ok() const { return outcome.index() == 0; }
  const Json& result() const { return std::get<0>(outcome); }
  const RemoteError& error() const { return std::get<1>(outcome); }
};

// Everything a server sends.
using ServerMessage = std::variant<Event, Reply>;

// --- encoding: each returns one complete line, "\n" included ---
std::string encode_request(const Request& request);
std::string encode_event(RequestId id, std::string_view name, const Json& data);
// The same, with the data written by `write_data` (which appends one JSON object's text to its
// argument): for a hot path that writes its data without building a Json first.
std::string encode_event(RequestId id, std::string_view name,
                         const std::function<void(std::string&)>& write_data);
std::string encode_result(RequestId id, const Json& result);
std::string encode_error(std::optional<RequestId> id, std::string_view code,
                         std::string_view message, const Json& data = Json());
std::string encode_reply(const Reply& reply);

// --- decoding (the line without its "\n") ---

// Why a request line was refused, and what to answer: the id when it was readable (so the
// client can match the error to its request), else nullopt ("id":null).
struct RejectedRequest {
  std::optional<RequestId> id;
  RemoteError error;  // code bad_request, unsupported_version or too_large
};

// Accepts exactly {"v":1,"id":<integer>,"method":<non-empty string>[,"params":<object|null>]};
// unknown extra members are ignored (forward compatibility). The method is not checked here:
// that is the handler's unknown_method.
std::variant<Request, RejectedRequest> decode_request(std::string_view line,
                                                      const JsonLimits& limits = {});

// A server's line: an event or a reply. Malformed => Error (UV_EPROTO; UV_E2BIG if too large).
Result<ServerMessage> decode_server_message(std::string_view line, const JsonLimits& limits = {});

}  // namespace stackie::ipc
