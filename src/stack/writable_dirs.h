// The directories the blocks of a stack can write besides their storage (project directories,
// volumes of a host directory), and the promise that nothing a block planted in them is
// followed when a block is started.
//
// A block with `path: .` writes the whole project; a neighbour binds the project's `./conf`
// (a compose-style volume) or has `./api` as its own project. If the first block swaps those
// for links to ~/.ssh, the next `up` would bind ~/.ssh into the neighbour. So every sandboxed
// block's policy names these directories (SandboxPolicy::link_free_roots), and the lockbox opens
// what it binds below them with no link on the way; the loader refuses such a start before
// anything runs, naming the link and the block that can write where it is.
#pragma once

#include <vector>

#include "base/error.h"
#include "stack/stack_file.h"
#include "stack/stack_model.h"

namespace stackie {

// `decls[i]` is the declaration of `blocks[i]` (for the position of a refusal). Fills each
// sandboxed block's policy.link_free_roots (shared instances bind only their storage and are
// left as they are), then checks that no bind source below one of them is reached through a
// link.
Status confine_writable_dirs(std::vector<ResolvedBlock>& blocks,
                             const std::vector<const StackBlockDecl*>& decls);

}  // namespace stackie
