// The directories the blocks of a stack can write besides their storage (project directories,
// volumes of a host directory), and the promise that nothing a block planted in them is
// followed when the stack is loaded or a block is started.
//
// A block with `path: .` writes the whole project; a neighbour binds the project's `./conf`
// (a compose-style volume) or has `./api` as its own project. If the first block swaps those
// for links to ~/.ssh, the next `up` would bind ~/.ssh into the neighbour. So every sandboxed
// block's policy names these directories (SandboxPolicy::link_free_roots), and the lockbox opens
// what it binds below them with no link on the way; the loader refuses such a start before
// anything runs, naming the link and the block that can write where it is. The same holds for
// what decides how the stack runs (the stack file, its `sources:`): a link there could be
// swapped for the block's own file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "stack/stack_file.h"
#include "stack/stack_model.h"

namespace stackie {

// From the declarations of every block of the stack, whatever profiles are selected (a block
// not started by this `up` may have written there before): each project (`path`) and each
// volume of a host directory that is not read-only.
std::vector<WritableDir> declared_writable_dirs(const StackFile& stack);

// The first symbolic link on the way down to `path` from a directory of `dirs` that holds it
// strictly (`path` itself included), with that directory; nullopt when there is none.
struct LinkBelow {
  std::string link;
  WritableDir dir;
};
std::optional<LinkBelow> link_below(const std::vector<WritableDir>& dirs, const std::string& path);

// A file or directory that decides how the stack runs, and where the stack names it.
struct DecisivePath {
  std::string path;
  SourceLocation where;
};

// `decls[i]` is the declaration of `blocks[i]` (for the position of a refusal). Refuses a
// decisive path reached through a link below a writable directory; fills each sandboxed block's
// policy.link_free_roots (the declared directories and what the built blocks write outside their
// storage; shared instances bind only their storage and are left as they are); refuses a bind
// source reached through a link below one of them. Returns those directories, outermost only.
Result<std::vector<WritableDir>> confine_writable_dirs(
    std::vector<ResolvedBlock>& blocks, const std::vector<const StackBlockDecl*>& decls,
    std::vector<WritableDir> dirs, const std::vector<DecisivePath>& decisive);

}  // namespace stackie
