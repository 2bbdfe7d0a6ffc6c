// `stackie doctor`: checks what the sandbox and the daemon need from this host, one line each,
// OK or FAIL with the fix.
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/doctor_checks.h"
#include "stack/settings.h"

namespace stackie::cli {

extern const char kDoctorUsage[] =
    "Usage: stackie doctor\n"
    "\n"
    "Check the host: kernel version, what the sandbox needs (Linux: unprivileged user\n"
    "namespaces, sysctls and a real unshare, and seccomp; macOS: Seatbelt), the daemon\n"
    "socket, and that storage is writable. One line per check, OK or FAIL with the fix.\n"
    "\n"
    "Exit status: 0 every check passed, 1 some check failed, 2 usage error.\n";

namespace {

struct Report {
  int failures = 0;
  void line(bool ok, const std::string& what, const std::string& fix = "") {
    std::printf("%-4s %s%s%s\n", ok ? "OK" : "FAIL", what.c_str(), ok || fix.empty() ? "" : " - ",
                ok ? "" : fix.c_str());
    if (!ok) ++failures;
  }
};

}  // namespace

int run_doctor(std::span<char*> argv) {
  if (argv.size() > 1) return usage_error("doctor", "takes no arguments");
  Report report;
  utsname uts{};
  uname(&uts);
  report.line(true, std::string("kernel ") + uts.sysname + " " + uts.release);
  for (const DoctorLine& check : sandbox_host_checks())
    report.line(check.ok, check.what, check.fix);
  auto socket = daemon_socket_path();
  if (!socket.ok()) {
    report.line(false, "socket path", socket.error().message);
  } else {
    auto client = ipc::Client::connect(*socket);
    report.line(
        client.ok(), "daemon reachable on " + *socket,
        client.ok() ? "" : "start it: stackie daemon start (" + client.error().message + ")");
  }
  auto home = stackie_home(current_environment());
  if (home.ok()) {
    auto settings = load_settings(config_path(*home));
    std::string root = storage_root(*home, settings.ok() ? *settings : Settings{});
    std::string probe = root + "/.doctor-probe";
    (void)!std::system(("mkdir -p '" + root + "'").c_str());
    FILE* f = std::fopen(probe.c_str(), "w");
    report.line(f != nullptr, "storage writable: " + root,
                "make it writable or set storage_root in " + config_path(*home));
    if (f) {
      std::fclose(f);
      unlink(probe.c_str());
    }
  } else {
    report.line(false, "stackie home", home.error().message);
  }
  return report.failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace stackie::cli
