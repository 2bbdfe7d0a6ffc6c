// Namespaces and identity (DESIGN.md §5.2, §5.4): unshare, the one-line uid/gid maps, the
// hostname, `lo` up.
#pragma once

#include <optional>
#include <string>

#include "policy/policy.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// unshare(user, mount, pid, ipc, uts, cgroup, and net unless network host) and the maps. When
// the user namespace is refused, the error carries the diagnosis (cause and fix). After
// make_namespaces_ahead, only the mount and cgroup namespaces are made (none when
// `mount_and_cgroup` is false: pid 1 forked ahead makes its own), and a policy of another kind
// than the one made ahead is refused: the process cannot leave the namespaces it is in.
std::optional<SetupError> enter_new_namespaces(const SandboxPolicy& policy,
                                               bool mount_and_cgroup = true);

// The hostname of a sandbox named `name` (its sandbox id; "stackie" without one): the name
// itself, or for a name over 64 bytes its start and a hash of the whole.
std::string sandbox_hostname(const std::string& name);
// In the new uts and net namespaces: the sandbox's hostname, loopback up.
std::optional<SetupError> configure_namespaces(const SandboxPolicy& policy);

// For a zygote's spare, before its request comes (linux_zygote.cc): what of
// enter_new_namespaces and configure_namespaces depends only on the kind of sandbox (its own
// network or the host's, uid 0 inside or the caller's), so that the monitor it becomes saves
// that time (1.0-1.4 ms of a spawn here). Two wait for the request: the mount namespace (a copy
// of the host's mounts as they are then) and the cgroup one (rooted where the block's cgroup
// is joined). An error once in the new namespaces is kept, and is what enter_new_namespaces
// reports for the request; a refused unshare leaves the monitor to try again.
void make_namespaces_ahead(bool own_network, bool root_inside);

// This process is in namespaces make_namespaces_ahead made: only the namespace lockbox's
// run_sandboxed may go on in it.
bool namespaces_made_ahead();
// ... and they were all made, a pid namespace among them, with no error: its pid 1 may be
// forked ahead too (fork_init_ahead, linux_launch.h).
bool pid_namespace_made_ahead();

}  // namespace stackie::linux_sandbox
