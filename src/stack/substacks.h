// `stacks:` (stackie-stack.yml(5), SUBSTACKS): other stack files composed into one stack. Each
// substack's blocks join the including stack under their own names (its sandbox ids, volumes
// and host ports are the including stack's), as it is or with some of their fields replaced.
//
// A stack file is the project's, but a substack path is followed on the daemon's side: it must
// stay inside the project directory (the top stack file's), with no symbolic link on the way,
// name a regular file, and not include itself (a cycle) at any depth.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "stack/stack_file.h"

namespace stackie {

// Reads every `stacks:` entry of `stack` (recursively) and appends their blocks, sources and
// files to it. Warnings ("FILE:LINE:COL: warning: ...") for what a substack says that the
// including stack decides (its storage_root, its ports mode) go to `warnings`.
Status compose_substacks(StackFile& stack, std::vector<std::string>& warnings);

}  // namespace stackie
