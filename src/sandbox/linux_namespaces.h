// Namespaces and identity (DESIGN.md §5.2, §5.4): unshare, the one-line uid/gid maps, the
// hostname, `lo` up.
#pragma once

#include <optional>

#include "policy/policy.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// unshare(user, mount, pid, ipc, uts, cgroup, and net unless network host) and the maps. When
// the user namespace is refused, the error carries the diagnosis (cause and fix).
std::optional<SetupError> enter_new_namespaces(const SandboxPolicy& policy);

// In the new uts and net namespaces: the sandbox's hostname, loopback up.
std::optional<SetupError> configure_namespaces(const SandboxPolicy& policy);

}  // namespace stackie::linux_sandbox
