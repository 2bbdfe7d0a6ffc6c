#include "supervisor/host_ports.h"

#include <algorithm>
#include <string>

namespace stackie {
namespace {

// How far "next free" looks before it gives up.
constexpr int kSearchSpan = 100;

const BlockStatus* daemon_holder(const std::vector<BlockStatus>& running, int port,
                                 const ServedPort** which) {
  for (const auto& block : running)
    for (const auto& served : block.serves)
      if ((served.host_port != 0 ? served.host_port : served.port) == port) {
        *which = &served;
        return &block;
      }
  return nullptr;
}

}  // namespace

std::string who_holds(const HostPortRequest& request, int port,
                      const std::vector<BlockStatus>& running) {
  const ServedPort* served = nullptr;
  const BlockStatus* holder = daemon_holder(running, port, &served);
  bool ours = holder != nullptr && holder->stack == request.stack &&
              holder->block == request.block && served->name == request.port_name;
  if (ours) return "";
  if (holder != nullptr)
    return "block '" + holder->block + "' (serves." + served->name + ") of stack '" +
           holder->stack + "'";
  if (host_port_free(port)) return "";
  std::string who = port_holder(port);
  return who.empty() ? "another process" : who;
}

Result<int> allocate_host_port(const HostPortRequest& request,
                               const std::vector<BlockStatus>& running) {
  int last = request.exact ? request.wanted : std::min(65535, request.wanted + kSearchSpan);
  std::string first_holder;
  for (int port = request.wanted; port <= last; ++port) {
    std::string who = who_holds(request, port, running);
    if (who.empty()) return port;
    if (port == request.wanted) first_holder = who;
  }
  std::string what = "host port " + std::to_string(request.wanted) + " for '" + request.block +
                     "' (serves." + request.port_name + ") is in use by " + first_holder;
  if (request.exact) return Error{UV_EADDRINUSE, what};
  return Error{UV_EADDRINUSE, what + ", and so is every port up to " + std::to_string(last)};
}

}  // namespace stackie
