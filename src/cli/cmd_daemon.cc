// `stackie daemon start|stop|status`; install and uninstall are in cmd_daemon_service.cc.
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"

namespace stackie::cli {

extern const char kDaemonUsage[] =
    "Usage: stackie daemon start|stop|status [--json]\n"
    "       stackie daemon install [--socket-activation] | uninstall\n"
    "\n"
    "  start      start stackied unless it runs (waits up to 5 s for its socket)\n"
    "  stop       ask stackied to stop every stack and exit\n"
    "  status     pid, version, uptime and stacks of the running daemon (--json: verbatim)\n"
    "  install    write a systemd user unit (Linux) or a LaunchAgent (macOS) that runs\n"
    "             stackied, and print the command that enables it; on Windows, add\n"
    "             stackied.exe to HKCU\\...\\CurrentVersion\\Run (runs at logon)\n"
    "  uninstall  remove what install wrote\n"
    "\n"
    "Options:\n"
    "      --json               status: the daemon's document verbatim\n"
    "      --socket-activation  install: also a stackied.socket; systemd opens the socket\n"
    "                           and starts stackied on the first connection\n"
    "\n"
    "Exit status: 0, 1 failed, 2 usage error, 3 the daemon is not running (status, stop).\n";

int run_daemon(std::span<char*> argv) {
  if (argv.size() < 2)
    return usage_error("daemon", "missing start, stop, status, install or uninstall");
  std::string_view action = argv[1];
  if (action == "install") return run_daemon_install(argv.subspan(1));
  if (action == "uninstall") return run_daemon_uninstall(argv.subspan(1));
  bool json = false;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (std::string_view(argv[i]) == "--json" && action == "status")
      json = true;
    else
      return usage_error("daemon", "unexpected argument '" + std::string(argv[i]) + "'");
  }
  if (action == "start") {
    auto connection = connect_or_start_daemon();
    if (!connection.client) return connection.exit_code;
    std::printf("stackied is running\n");
    return kExitOk;
  }
  if (action != "stop" && action != "status")
    return usage_error("daemon", "unknown action '" + std::string(action) + "'");
  auto connection = connect_daemon();
  std::string autostart = action == "status" && !json ? daemon_autostart_note() : "";
  if (!connection.client) {
    if (!autostart.empty()) std::printf("%s\n", autostart.c_str());
    return connection.exit_code;
  }
  auto reply = connection.client->call(action == "stop" ? "daemon.stop" : "daemon.status");
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  if (action == "stop") {
    std::printf("stackied is stopping\n");
    return kExitOk;
  }
  const auto& r = reply->result();
  if (json) {
    print_json(r);
    return kExitOk;
  }
  std::printf("stackied %s, pid %lld, up %s\n", r["version"].string_or("?").c_str(),
              static_cast<long long>(r["pid"].int_or(0)), format_uptime(r["uptime_s"]).c_str());
  if (r["stacks"].is_array())
    for (const auto& s : r["stacks"].as_array())
      std::printf("  %s  %s\n", s["name"].string_or("?").c_str(), s["file"].string_or("").c_str());
  if (!autostart.empty()) std::printf("%s\n", autostart.c_str());
  return kExitOk;
}

}  // namespace stackie::cli
