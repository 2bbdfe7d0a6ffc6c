// The CLI's command table: one entry per verb, each verb in its own cmd_VERB.cc.
#pragma once

#include <span>
#include <string_view>

namespace stackie::cli {

// Exit codes, documented in stackie(1).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitDaemonUnreachable = 3,
};

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `stackie --help`
  std::string_view usage;    // full text for `stackie help VERB` and `stackie VERB --help`
  // argv[0] is the verb itself.
  int (*run)(std::span<char*> argv);
};

std::span<const Command> commands();
const Command* find_command(std::string_view name);

}  // namespace stackie::cli
