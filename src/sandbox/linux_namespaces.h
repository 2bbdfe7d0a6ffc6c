// Namespaces and identity (DESIGN.md §5.2, §5.4): unshare, the one-line uid/gid maps, the
// hostname, `lo` up.
#pragma once

#include <optional>

#include "policy/policy.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// unshare(user, mount, pid, ipc, uts, cgroup, and net unless network host) and the maps. When
// the user namespace is refused, the error carries the diagnosis (cause and fix). After
// make_namespaces_ahead, only the cgroup namespace is made, and a policy of another kind than
// the one made ahead is refused: the process cannot leave the namespaces it is in.
std::optional<SetupError> enter_new_namespaces(const SandboxPolicy& policy);

// In the new uts and net namespaces: the sandbox's hostname, loopback up.
std::optional<SetupError> configure_namespaces(const SandboxPolicy& policy);

// For a zygote's spare, before its request comes (linux_zygote.cc): everything of
// enter_new_namespaces and configure_namespaces that depends only on the kind of sandbox (its
// own network or the host's, uid 0 inside or the caller's), so that the monitor it becomes
// saves that time (0.6-0.9 ms here). The cgroup namespace waits for the request: the block's
// cgroup is joined first, so that the namespace is rooted there. An error is kept, and is what
// enter_new_namespaces reports for the request.
void make_namespaces_ahead(bool own_network, bool root_inside);

}  // namespace stackie::linux_sandbox
