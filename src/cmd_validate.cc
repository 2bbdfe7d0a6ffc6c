// Placeholder until the loader lands (issue 2); replaced by the real verb.
#include <cstdio>
#include <span>

#include "cli.h"
#include "cmd.h"

namespace stackie::cli {

extern const char kValidateUsage[] =
    "Usage: stackie validate [-f FILE] [--json]\n"
    "\n"
    "Load and resolve a stack file without a daemon and print the result.\n";

int run_validate(std::span<char*>) {
  std::fprintf(stderr, "stackie validate: the stack loader is not built yet\n");
  return kExitFailed;
}

}  // namespace stackie::cli
