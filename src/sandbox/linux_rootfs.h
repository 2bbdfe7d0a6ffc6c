// The sandbox's file system (DESIGN.md §5.3), built by pid 1 in the new mount namespace: a
// tmpfs root holding only what the policy lists, then pivot_root and the old root detached.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// The default read-only system view (policy.system_view): /usr, the /bin /sbin /lib* links (a
// symlink on the host stays a symlink), and the parts of /etc a program needs to start. Entries
// missing on the host are skipped.
const std::vector<std::string>& system_view_paths();

// Build the root from the policy and pivot into it; the working directory is the policy's.
// On failure nothing is half-visible to a block: the caller exits 125.
std::optional<SetupError> build_root_and_pivot(const SandboxPolicy& policy);

}  // namespace stackie::linux_sandbox
