// How stackied turns an `up` request into a ResolvedStack, its socket path and log settings:
// the glue between the daemon core and the loader (src/loader.h).
#pragma once

#include <string>

#include "stack/loader.h"
#include "supervisor/block_logs.h"
#include "supervisor/daemon_core.h"

namespace stackie {

// `allocate` picks the host ports of the stack's served ports (supervisor/host_ports.h).
// `ports_on_host`: the sandbox has no network namespace (the landlock backend), so a
// `network: localhost` block binds its host port itself (stack/loader.h LoadOptions).
StackLoader daemon_stack_loader(const std::string& home, HostPortAllocator allocate,
                                bool ports_on_host = false);
// [sandbox] backend of the user's settings: "auto" (also when unreadable), "namespaces" or
// "landlock".
std::string daemon_sandbox_backend(const std::string& home);
// The socket: the user's settings, else the default of DESIGN.md §4 (stack/paths.h).
Result<std::string> daemon_socket_path(const std::string& home);
LogSettings daemon_log_settings(const std::string& home);
// config.toml's api_port (0: the HTTP API is off); an error when config.toml does not load.
Result<int> daemon_api_port(const std::string& home);
// Where this daemon keeps --ephemeral storage (stack/paths.h ephemeral_base): its
// $XDG_RUNTIME_DIR when that is a directory of ours closed to everyone else, else HOME.
std::string daemon_ephemeral_base(const std::string& home);

}  // namespace stackie
