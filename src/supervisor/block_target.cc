#include "supervisor/block_target.h"

#include <vector>

#include "stack/shared_mode.h"

namespace stackie {

Result<BlockTarget> resolve_block_target(const Supervisor& supervisor, std::string stack,
                                         std::string name) {
  if (name.empty()) return Error{UV_EINVAL, "a block name is required"};
  if (auto slash = name.find('/'); slash != std::string::npos) {
    stack = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  if (!stack.empty() && !supervisor.has_stack(stack))
    return Error{UV_ENOENT, "stack " + stack + " is not up"};
  std::vector<BlockTarget> by_name, by_id;
  for (const auto& row : supervisor.ps(stack)) {
    if (row.block == name) by_name.push_back({row.stack, row.block});
    if (row.sandbox_id == name) by_id.push_back({row.stack, row.block});
  }
  const auto& found = by_name.empty() ? by_id : by_name;
  if (found.size() == 1) return found.front();
  if (found.size() > 1) {
    std::string stacks;
    for (const auto& target : found) stacks += (stacks.empty() ? "" : ", ") + target.stack;
    return Error{UV_EINVAL, "block " + name + " is in several stacks (" + stacks +
                                "): name one as STACK/" + name};
  }
  if (!stack.empty()) {
    // A shared block of the stack: its instance, which the shared stack runs.
    if (const StackRunner* runner = supervisor.stack(stack))
      for (const auto& block : runner->spec().blocks)
        if (block.name == name && !block.shared_instance.empty() &&
            supervisor.has_stack(kSharedStack))
          return BlockTarget{kSharedStack, block.shared_instance};
    return Error{UV_ENOENT, "stack " + stack + " has no block " + name};
  }
  return Error{UV_ENOENT, "no stack has a block " + name};
}

}  // namespace stackie
