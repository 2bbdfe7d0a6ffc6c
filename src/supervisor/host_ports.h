// Which host port a block's `serves` port gets (DESIGN.md §6): the declared one when it is
// free, else the next free one above it — or, when the request is exact (a strict stack, a
// block on the host's network), an error that names who holds the port.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "stack/loader.h"
#include "supervisor/supervisor.h"

namespace stackie {

// `running` is what the daemon's stacks hold now (Supervisor::ps): a port held by the very
// same block and port name counts as free (a re-applied stack keeps its ports).
Result<int> allocate_host_port(const HostPortRequest& request,
                               const std::vector<BlockStatus>& running);

// Who holds `port` for this request: "" when it is free (or held by the very same block and
// port), else "block 'db' (serves.sql) of stack 'shop'", "pid 812 (postgres)" or "another
// process".
std::string who_holds(const HostPortRequest& request, int port,
                      const std::vector<BlockStatus>& running);

// Whether 127.0.0.1:port can be bound right now.
bool host_port_free(int port);

// "pid 123 (redis-server)" for a listener on `port` found in /proc, or "" when unknown (a
// process of another user, whose fds we cannot see).
std::string port_holder(int port);

}  // namespace stackie
