// Lookups in what load_stack resolved, shared by the loader tests.
#pragma once

#include <string>

#include "stack/loader.h"

namespace stackie::testing {

// The block named `name`, or nullptr.
inline const ResolvedBlock* find_block(const ResolvedStack& stack, const std::string& name) {
  for (const auto& block : stack.blocks)
    if (block.name == name) return &block;
  return nullptr;
}

// The value of `name` in the block's environment, or "<unset>".
inline std::string env_value(const ResolvedBlock& block, const std::string& name) {
  for (const auto& [key, value] : block.policy.environment)
    if (key == name) return value;
  return "<unset>";
}

}  // namespace stackie::testing
