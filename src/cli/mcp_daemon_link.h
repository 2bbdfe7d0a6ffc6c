// How the MCP tools reach stackied: the CLI's own IPC client on the user's socket (so the
// server inherits its uid checks both ways), one connection per request, as the verbs do (the
// daemon closes a connection idle for 5 s; an MCP session idles for hours). An interface so
// the tools' logic is tested against a fake daemon.
#pragma once

#include <chrono>
#include <functional>
#include <string_view>

#include "base/error.h"
#include "base/json.h"
#include "ipc/protocol.h"

namespace stackie::cli::mcp {

class DaemonLink {
 public:
  using OnEvent = std::function<void(const ipc::Event& event)>;
  virtual ~DaemonLink() = default;
  // The request's result; an Error's message says what went wrong in one line (the daemon's
  // own message for a remote error, "the daemon is not running ..." when nobody serves).
  virtual Result<Json> call(std::string_view method, const Json& params,
                            const OnEvent& on_event = {}) = 0;
};

class SocketDaemonLink final : public DaemonLink {
 public:
  Result<Json> call(std::string_view method, const Json& params,
                    const OnEvent& on_event = {}) override;
};

}  // namespace stackie::cli::mcp
