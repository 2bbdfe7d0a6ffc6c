// Running stackied under the user's service manager: the text of a systemd user unit, its
// socket unit and a launchd LaunchAgent, and where each goes. Pure functions of their inputs:
// `stackie daemon install` writes what they return, the build generates the copies shipped
// under share/ with them, and the tests check them on any host (the plist on Linux too).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "stack/paths.h"

namespace stackie {

// The LaunchAgent's label, also its file name (<label>.plist).
inline constexpr char kLaunchdLabel[] = "dev.stackie.stackied";
inline constexpr char kSystemdServiceName[] = "stackied.service";
inline constexpr char kSystemdSocketName[] = "stackied.socket";

struct ServiceSpec {
  std::string daemon_program;  // absolute path of stackied
  std::string stackie_home;    // put in the unit's environment when non-empty
  std::string socket_path;     // the daemon's socket (systemd socket unit); empty = the default
                               // under systemd, $XDG_RUNTIME_DIR/stackie/stackied.sock
  std::string runtime_dir;     // $XDG_RUNTIME_DIR: a socket below it is written as %t/...
  std::string log_path;        // launchd: stdout and stderr go there; empty = not set
};

// stackied.service: Type=notify (stackied sends READY=1 and STOPPING=1 itself), ExecStart
// `stackied --foreground`, restarted on failure, only the daemon signalled on stop.
std::string systemd_service_unit(const ServiceSpec& spec);
// stackied.socket: ListenStream on the daemon's socket, 0600 in a 0700 directory.
std::string systemd_socket_unit(const ServiceSpec& spec);
// A LaunchAgent plist: KeepAlive unless it exited successfully (`daemon stop`). Without
// `socket_activation`: RunAtLoad, and stackied binds its socket itself. With it: a Sockets
// entry (launchd_activation.h's "Listeners") on spec.socket_path, mode 0600, and no RunAtLoad:
// launchd listens from login and starts stackied on the first connection (the first CLI call).
std::string launchd_plist(const ServiceSpec& spec, bool socket_activation);

// $XDG_CONFIG_HOME/systemd/user, else $HOME/.config/systemd/user.
Result<std::string> systemd_user_unit_dir(const Environment& env);
// $HOME/Library/LaunchAgents.
Result<std::string> launch_agents_dir(const Environment& env);

struct ServiceFile {
  std::string path;
  std::string text;
};

struct ServiceInstallPlan {
  std::vector<std::string> directories;  // made (0700, with parents) before the files
  std::vector<ServiceFile> files;
  std::vector<std::string> enable_commands;  // shell lines that enable and start it
};

// What `stackie daemon install` writes on `os` ("linux", "macos"); any other OS is an error.
// `socket_activation`: the service manager holds spec.socket_path (absolute) and starts the
// daemon on the first connection: systemd's socket unit, or launchd's Sockets entry (whose
// directory launchd does not make: it is in `directories`).
Result<ServiceInstallPlan> plan_service_install(const std::string& os, const ServiceSpec& spec,
                                                const Environment& env, bool socket_activation);

struct ServiceUninstallPlan {
  std::vector<std::string> files;             // removed when they exist
  std::vector<std::string> enable_links;      // removed when they are links to one of `files`
  std::vector<std::string> disable_commands;  // what stops a unit that is still loaded
};

// What `stackie daemon uninstall` removes: every file install may have written.
Result<ServiceUninstallPlan> plan_service_uninstall(const std::string& os, const Environment& env);

}  // namespace stackie
