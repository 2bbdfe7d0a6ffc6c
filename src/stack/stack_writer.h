// A StackFile as stackie-stack.yml text: what `stackie convert` prints for a Compose file, so a
// project can keep the stack file instead.
#pragma once

#include <string>
#include <vector>

#include "stack/stack_file.h"

namespace stackie {

// The stack file's text; each line of `header` becomes a comment at its top.
std::string write_stack_file(const StackFile& stack, const std::vector<std::string>& header);

}  // namespace stackie
