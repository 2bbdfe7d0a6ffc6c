// Every verb's entry point and usage text; each is defined in its own cmd_VERB.cc and listed in
// the table in cli_commands.cc.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace stackie::cli {

int run_validate(std::span<char*> argv);
extern const char kValidateUsage[];
int run_convert(std::span<char*> argv);
extern const char kConvertUsage[];
int run_up(std::span<char*> argv);
extern const char kUpUsage[];
int run_down(std::span<char*> argv);
extern const char kDownUsage[];
int run_ps(std::span<char*> argv);
extern const char kPsUsage[];
int run_status(std::span<char*> argv);
extern const char kStatusUsage[];
int run_logs(std::span<char*> argv);
extern const char kLogsUsage[];
int run_events(std::span<char*> argv);
extern const char kEventsUsage[];
int run_stats(std::span<char*> argv);
extern const char kStatsUsage[];
int run_exec(std::span<char*> argv);
extern const char kExecUsage[];
int run_restart(std::span<char*> argv);
extern const char kRestartUsage[];
int run_stop(std::span<char*> argv);
extern const char kStopUsage[];
int run_start(std::span<char*> argv);
extern const char kStartUsage[];
int run_volume(std::span<char*> argv);
extern const char kVolumeUsage[];
int run_daemon(std::span<char*> argv);
extern const char kDaemonUsage[];
int run_daemon_install(std::span<char*> argv);  // argv[0] is "install"
int run_daemon_uninstall(std::span<char*> argv);
// One line for `daemon status` about what `daemon install` set up, or "" where it says nothing
// (POSIX: the service manager's own status tells more).
std::string daemon_autostart_note();
int run_blocks(std::span<char*> argv);
extern const char kBlocksUsage[];
int run_search(std::span<char*> argv);
extern const char kSearchUsage[];
int run_watch(std::span<char*> argv);
extern const char kWatchUsage[];
// `up --watch`: watch the stack brought up from `file` (absolute) until interrupted.
int watch_stack(const std::string& file, const std::vector<std::string>& only);
// False where this build cannot watch files (Windows): watch_stack() then only says so.
bool watch_supported();
int run_top(std::span<char*> argv);  // also `stackie ui`
extern const char kTopUsage[];
int run_doctor(std::span<char*> argv);
extern const char kDoctorUsage[];
int run_mcp(std::span<char*> argv);
extern const char kMcpUsage[];

}  // namespace stackie::cli
