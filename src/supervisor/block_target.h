// The one way the daemon reads a block named by a client (every verb that takes BLOCK): a
// block name ("stackie.postgres"), STACK/BLOCK ("shop/stackie.postgres"), or the sandbox id
// that `ps --json` and the log directories show ("shop-postgres").
#pragma once

#include <string>

#include "base/error.h"
#include "supervisor/supervisor.h"

namespace stackie {

struct BlockTarget {
  std::string stack;
  std::string block;  // the block's name in its stack
};

// `stack` may be empty (any stack that is up). Errors: UV_ENOENT (no such stack or block, the
// message names what is up), UV_EINVAL (the name is in several stacks: say which to pick).
Result<BlockTarget> resolve_block_target(const Supervisor& supervisor, std::string stack,
                                         std::string name);

}  // namespace stackie
