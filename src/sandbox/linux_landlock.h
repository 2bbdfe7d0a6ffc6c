// The Landlock backend's rules (stackie-lockbox(1) BACKENDS): the same SandboxPolicy the
// namespace lockbox turns into mounts becomes one Landlock ruleset, built with the features of
// the running kernel's ABI (1 and up):
//
//   ABI 1  file system: the system view and read-only paths readable, read-write paths
//          writable, nothing else; ptrace of processes outside the block's domain refused
//   ABI 2  rename/link across directories (refer) inside the read-write paths
//   ABI 3  truncate handled (allowed in read-write paths only)
//   ABI 4  TCP: bind only the policy's tcp_bind ports, connect only its tcp_connect ports
//          (none at all with `network: none`; unrestricted with `network: host`)
//   ABI 5  ioctl on device files opened by the block: /dev/null and friends only
//   ABI 6  scoping: no signal to a process outside the block's domain, no connect to an
//          abstract unix socket made outside it
//   ABI 7  (audit logging only: nothing more to restrict)
//
// Landlock has no bind mount: a path is seen where it is on the host (a policy with DEST !=
// SRC, or a tmpfs, is refused), and rules only add rights along a path, so a read-only path
// inside a read-write directory (the project's stack file, .git, .env) is kept read-only by
// granting the directories on the way less (see allow_read_write_around).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// The Landlock ABI the running kernel offers: 0 when none (not built in, or disabled at boot).
int landlock_abi();

// What the ruleset of `abi` enforces, as words for --version, doctor and the tests:
// "fs refer truncate net ioctl_dev scope_signal scope_abstract_unix".
std::string landlock_features(int abi);

// The paths a landlocked block may read besides the policy's own: the system view (when
// asked), the few device nodes every program opens, and /proc (read-only; other processes'
// memory and environment stay closed: Landlock refuses ptrace access outside the domain).
struct LandlockView {
  std::vector<std::string> read_only;
  std::vector<std::string> read_write;
};
LandlockView landlock_view(const SandboxPolicy& policy);

// Checks that `policy` can be enforced without mounts: every bind at its own path, no tmpfs,
// no read-only path inside a read-write one. The error names the offending path.
std::optional<SetupError> check_landlock_policy(const SandboxPolicy& policy);

// Builds the ruleset (an O_CLOEXEC fd) for `policy` at the kernel's ABI; the caller's child
// calls landlock_restrict_self on it after no_new_privs (linux_lockdown.cc). Paths absent on
// the host are skipped like the namespace lockbox's optional system view entries.
std::optional<SetupError> make_landlock_ruleset(const SandboxPolicy& policy, int* ruleset_fd);

}  // namespace stackie::linux_sandbox
