// `stackie doctor`: checks what the sandbox and the daemon need from this host, one line each,
// OK or FAIL with the fix.
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <span>
#include <string>

#include "base/cgroup_v2.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/settings.h"

namespace stackie::cli {

extern const char kDoctorUsage[] =
    "Usage: stackie doctor\n"
    "\n"
    "Check the host: kernel version, unprivileged user namespaces (sysctls and a real\n"
    "unshare), seccomp, the daemon socket, how block limits are enforced (a delegated cgroup\n"
    "v2 or rlimits, and why), and that storage is writable. One line per check, OK or FAIL\n"
    "with the fix.\n"
    "\n"
    "Exit status: 0 every check passed, 1 some check failed, 2 usage error.\n";

namespace {

// The first line of a /proc file, or nullopt when the file does not exist.
std::optional<std::string> read_line(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  return line;
}

struct Report {
  int failures = 0;
  void line(bool ok, const std::string& what, const std::string& fix = "") {
    std::printf("%-4s %s%s%s\n", ok ? "OK" : "FAIL", what.c_str(), ok || fix.empty() ? "" : " - ",
                ok ? "" : fix.c_str());
    if (!ok) ++failures;
  }
};

bool can_unshare_user() {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Which enforcement of the blocks' `limits` is in use: the running daemon's answer, else what
// a daemon started from here would find. Both work; the cgroup bounds a block as a whole.
void report_limits(Report& report, ipc::Client* daemon) {
  std::string enforcement;
  if (daemon != nullptr) {
    auto reply = daemon->call("daemon.status", Json::object());
    if (reply.ok() && reply->ok()) enforcement = reply->result()["limits"].string_or("");
    if (!enforcement.empty()) {
      report.line(true, "block limits: " + enforcement);
      return;
    }
  }
  auto cgroup = find_delegated_cgroup();
  report.line(true,
              "block limits (for a daemon started from here): " +
                  (cgroup.ok() ? "cgroup v2 (" + cgroup->dir + ")"
                               : "rlimits (no delegated cgroup: " + cgroup.error().message + ")"));
}

}  // namespace

int run_doctor(std::span<char*> argv) {
  if (argv.size() > 1) return usage_error("doctor", "takes no arguments");
  Report report;
  utsname uts{};
  uname(&uts);
  report.line(true, std::string("kernel ") + uts.sysname + " " + uts.release);
  if (auto v = read_line("/proc/sys/kernel/unprivileged_userns_clone"))
    report.line(*v != "0", "kernel.unprivileged_userns_clone = " + *v,
                "run: sysctl -w kernel.unprivileged_userns_clone=1");
  if (auto v = read_line("/proc/sys/user/max_user_namespaces"))
    report.line(*v != "0", "user.max_user_namespaces = " + *v,
                "run: sysctl -w user.max_user_namespaces=15000");
  if (auto v = read_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
    report.line(*v == "0", "kernel.apparmor_restrict_unprivileged_userns = " + *v,
                "run: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor "
                "profile for stackie-lockbox)");
  report.line(can_unshare_user(), "unshare(CLONE_NEWUSER) works",
              "enable unprivileged user namespaces, or run blocks with --no-sandbox");
  std::string seccomp;
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);)
    if (l.rfind("Seccomp:", 0) == 0) seccomp = l;
  report.line(!seccomp.empty(),
              "seccomp available (" + (seccomp.empty() ? "no Seccomp field" : seccomp) + ")",
              "a kernel built with CONFIG_SECCOMP_FILTER");
  auto socket = daemon_socket_path();
  if (!socket.ok()) {
    report.line(false, "socket path", socket.error().message);
  } else {
    auto client = ipc::Client::connect(*socket);
    report.line(
        client.ok(), "daemon reachable on " + *socket,
        client.ok() ? "" : "start it: stackie daemon start (" + client.error().message + ")");
    report_limits(report, client.ok() ? &*client : nullptr);
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
