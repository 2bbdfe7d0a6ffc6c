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
    Command{"convert", "print the stack file equivalent to a Compose file", kConvertUsage,
            run_convert},
    Command{"up", "start a stack (starts the daemon if needed)", kUpUsage, run_up},
    Command{"down", "stop a stack", kDownUsage, run_down},
    Command{"ps", "list blocks", kPsUsage, run_ps},
    Command{"status", "show one block", kStatusUsage, run_status},
    Command{"logs", "print or follow block logs", kLogsUsage, run_logs},
    Command{"events", "print the blocks' lifecycle events", kEventsUsage, run_events},
    Command{"stats", "show the blocks' CPU, memory, processes and I/O", kStatsUsage, run_stats},
    Command{"top", "show a stack live: blocks, stats and logs, with keys to act", kTopUsage,
            run_top},
    Command{"ui", "the same as top", kTopUsage, run_top},
    Command{"exec", "run a command inside a running block", kExecUsage, run_exec},
    Command{"restart", "restart blocks", kRestartUsage, run_restart},
    Command{"stop", "stop blocks", kStopUsage, run_stop},
    Command{"start", "start stopped blocks", kStartUsage, run_start},
    Command{"blocks", "list the block catalog, or show one block", kBlocksUsage, run_blocks},
    Command{"search", "search the block catalog", kSearchUsage, run_search},
    Command{"watch", "restart blocks when their files change", kWatchUsage, run_watch},
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
