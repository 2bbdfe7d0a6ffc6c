// The table of verbs. Adding a verb: write cmd_VERB.cc with `int run_VERB(std::span<char*>)`
// and its usage text, declare it here, add a row.
#include <array>

#include "cli/cli.h"
#include "cli/cmd.h"

namespace stackie::cli {

namespace {

const std::array kCommands = std::to_array<Command>({
    Command{"validate", "load and resolve a stack file without a daemon", kValidateUsage,
            run_validate},
    Command{"up", "start a stack (starts the daemon if needed)", kUpUsage, run_up},
    Command{"down", "stop a stack", kDownUsage, run_down},
    Command{"ps", "list blocks", kPsUsage, run_ps},
    Command{"status", "show one block", kStatusUsage, run_status},
    Command{"logs", "print or follow block logs", kLogsUsage, run_logs},
    Command{"exec", "run a command inside a running block", kExecUsage, run_exec},
    Command{"restart", "restart one block", kRestartUsage, run_restart},
    Command{"stop", "stop one block", kStopUsage, run_stop},
    Command{"start", "start a stopped block", kStartUsage, run_start},
    Command{"volume", "list or remove stacks' volumes", kVolumeUsage, run_volume},
    Command{"daemon", "start, stop, query or install stackied as a service", kDaemonUsage,
            run_daemon},
    Command{"doctor", "check the host for sandboxing and the daemon", kDoctorUsage, run_doctor},
    Command{"mcp", "serve the Model Context Protocol on stdio (for AI agents)", kMcpUsage, run_mcp},
});

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
