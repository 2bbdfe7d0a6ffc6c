// Every verb's entry point and usage text; each is defined in its own cmd_VERB.cc and listed in
// the table in cli_commands.cc.
#pragma once

#include <span>

namespace stackie::cli {

int run_validate(std::span<char*> argv);
extern const char kValidateUsage[];

}  // namespace stackie::cli
