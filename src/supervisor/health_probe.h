// One health-check attempt (DESIGN.md §7): tcp connect, http GET with an expected status, or
// an exec inside the block's sandbox. Each attempt is bounded by the check's timeout. The
// caller schedules attempts; an attempt owns its libuv handles and frees them itself.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "spawn/spawner.h"
#include "stack/stack_model.h"

namespace stackie {

// How the daemon reaches port P of a block: 127.0.0.1:P, from the daemon's network for
// passthrough and network:host blocks, or from a socket made inside the block's own network
// namespace (ProbeTarget::socket_source) for `network: localhost` ones.
using PortAddress = std::function<Result<sockaddr_storage>(int port)>;
PortAddress loopback_port_address();

struct ProbeTarget {
  PortAddress address;
  std::function<void(SocketDone)> socket_source;  // empty = the daemon's own network
  std::vector<std::string> exec_argv;             // exec: already wrapped to run inside the sandbox
  std::vector<std::string> exec_env;              // "K=V"
};

using ProbeDone = std::function<void(bool healthy, std::string detail)>;

// Destroying the handle cancels the attempt: no callback after that.
class ProbeHandle {
 public:
  virtual ~ProbeHandle() = default;
};

std::unique_ptr<ProbeHandle> run_probe(uv_loop_t* loop, const HealthCheck& check,
                                       const ProbeTarget& target, ProbeDone done);

}  // namespace stackie
