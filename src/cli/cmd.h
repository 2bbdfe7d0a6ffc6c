// Every verb's entry point and usage text; each is defined in its own cmd_VERB.cc and listed in
// the table in cli_commands.cc.
#pragma once

#include <span>

namespace stackie::cli {

int run_validate(std::span<char*> argv);
extern const char kValidateUsage[];
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
int run_doctor(std::span<char*> argv);
extern const char kDoctorUsage[];
int run_mcp(std::span<char*> argv);
extern const char kMcpUsage[];

}  // namespace stackie::cli
