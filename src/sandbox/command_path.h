// The block's command, as every lockbox backend finds and runs it: PATH lookup with the
// policy's own PATH (never the caller's) and the exit codes of a failed exec.
#pragma once

#include <string>

#include "policy/policy.h"

namespace stackie {

// PATH lookup inside the sandbox (the policy's PATH, else /usr/local/bin:/usr/bin:/bin). A name
// with a '/' is returned as is; a name found nowhere becomes a path that fails with ENOENT.
std::string resolve_command(const std::string& name, const SandboxPolicy& policy);

// Exit code for an execve errno: 127 not found, 126 otherwise.
int exec_failure_exit_code(int errnum);

}  // namespace stackie
