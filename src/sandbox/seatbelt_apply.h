// The macOS apply step: enter the Seatbelt profile for a policy, then exec the block.
// Implemented only in seatbelt_apply_macos.cc (compiled when sandbox=seatbelt).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"

namespace stackie {

// Puts the calling process into `seatbelt_profile(policy)` (the text stays in memory, never on
// disk), changes to the working directory, and execs `program` with argv and exactly the
// policy's environment plus STACKIE_IPC_PREFIX (the only POSIX IPC names it may use). Returns
// only on failure; after sandbox_init succeeded the process cannot leave the sandbox again.
// The caller has already made its own session (the monitor tracks it, seatbelt_launch.h).
Status seatbelt_apply_and_exec(const SandboxPolicy& policy, const std::string& program,
                               const std::vector<std::string>& argv);

}  // namespace stackie
