// The macOS apply step: enter the Seatbelt profile for a policy, then exec the block.
// Implemented only in seatbelt_apply_macos.cc (compiled when sandbox=seatbelt).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"

namespace stackie {

// Puts the calling process into `seatbelt_profile(policy)` (the text stays in memory, never on
// disk), changes to the working directory, starts a new session (the daemon stops the block by
// killing its process group) and execs argv (argv[0] is a path: no PATH search) with exactly
// the policy's environment. Returns only
// on failure; after sandbox_init succeeded the process cannot leave the sandbox again.
Status seatbelt_apply_and_exec(const SandboxPolicy& policy, const std::vector<std::string>& argv);

}  // namespace stackie
