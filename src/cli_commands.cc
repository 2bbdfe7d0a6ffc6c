// The table of verbs. Adding a verb: write cmd_VERB.cc with `int run_VERB(std::span<char*>)`
// and its usage text, declare it here, add a row.
#include <array>

#include "cli.h"
#include "cmd.h"

namespace stackie::cli {

namespace {

const std::array kCommands = {
    Command{"validate", "load and resolve a stack file without a daemon", kValidateUsage,
            run_validate},
};

}  // namespace

std::span<const Command> commands() {
  return kCommands;
}

const Command* find_command(std::string_view name) {
  for (const auto& command : kCommands)
    if (command.name == name) return &command;
  return nullptr;
}

}  // namespace stackie::cli
