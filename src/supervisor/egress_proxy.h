// `network: outbound` (issue 16): a first-party block keeps its own network namespace (only
// localhost, its declared ports and consumes cross), plus outbound TCP through this HTTP proxy.
// The lockbox makes the proxy's listening socket inside the block's namespace (like a consumes
// listener) and the block finds it in HTTP_PROXY/HTTPS_PROXY; the daemon, on the host's
// network, makes the outbound connections. Two request forms, as HTTP clients send them:
//   CONNECT host:port HTTP/1.1   (https, and any TCP): "200 Connection established", then bytes
//   GET http://host[:port]/path HTTP/1.1   (plain http): the request goes on as it came
// An optional allowlist of host:port patterns (`*` matches any run of characters) refuses the
// rest with "403 Forbidden" naming the destination. Everything runs on the daemon's loop.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/uv_handle.h"

namespace stackie {

class EgressTunnel;

class EgressProxy {
 public:
  using Note = std::function<void(const std::string&)>;  // one line for the block's log

  // Serves the listening socket `fd` (taken). `allow` empty = any destination.
  static Result<std::unique_ptr<EgressProxy>> adopt(uv_loop_t* loop, int fd,
                                                    std::vector<std::string> allow, Note note);
  ~EgressProxy();  // stops listening; open tunnels are closed
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  // Whether "host:port" matches the allowlist (true when it is empty).
  static bool allowed(const std::vector<std::string>& allow, const std::string& destination);

  static constexpr size_t kMaxTunnels = 1024;

 private:
  friend class EgressTunnel;
  EgressProxy(uv_loop_t* loop, std::vector<std::string> allow, Note note);
  void accept_one();

  uv_loop_t* loop_;
  std::vector<std::string> allow_;
  Note note_;
  std::set<EgressTunnel*> tunnels_;
  UvHandle<uv_tcp_t> listener_;
};

}  // namespace stackie
