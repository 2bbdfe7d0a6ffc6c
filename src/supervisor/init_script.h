// A block's `init` steps become one POSIX sh script that runs inside the block's sandbox, with
// the block's own policy, before its command (DESIGN.md §4). Guards (`if: {not_exists}`) are
// tested inside, where the paths mean what the block definition says; a fresh volume runs its
// guarded steps once, later starts skip them. `set -e`: the first failing step fails the block.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stack/stack_model.h"

namespace stackie {

// Single-quoted for sh: 'it'\''s'.
std::string shell_quote(std::string_view text);

// Empty when there are no steps.
std::string init_script(const std::vector<InitStep>& steps);

// argv that runs the script: /bin/sh -c SCRIPT stackie-init
std::vector<std::string> init_argv(const std::vector<InitStep>& steps);

}  // namespace stackie
