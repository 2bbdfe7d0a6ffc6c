// `stackie doctor`: checks what the sandbox and the daemon need from this host, one line each,
// OK or FAIL with the fix.
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>

#include "base/directories.h"
#include "base/userns_diagnosis.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/settings.h"

namespace stackie::cli {

extern const char kDoctorUsage[] =
    "Usage: stackie doctor\n"
    "\n"
    "Check the host: kernel version, unprivileged user namespaces (sysctls and a real\n"
    "unshare), seccomp, the daemon socket, and that storage is writable. One line per check,\n"
    "OK or FAIL with the fix.\n"
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

// 0 when an unprivileged user namespace can be made, else the errno of unshare(CLONE_NEWUSER)
// (in a child: this process stays as it is).
int unshare_user_errno() {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno & 0xff);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return ECHILD;
  return WEXITSTATUS(status);
}

}  // namespace

int run_doctor(std::span<char*> argv) {
  if (argv.size() > 1) return usage_error("doctor", "takes no arguments");
  Report report;
  utsname uts{};
  uname(&uts);
  report.line(true, std::string("kernel ") + uts.sysname + " " + uts.release);
  // The lockbox's own diagnosis (base/userns_diagnosis.h), so both say the same thing.
  const int unshare_errno = unshare_user_errno();
  const UsernsFacts facts = read_userns_facts(unshare_errno);
  for (const UsernsSysctl& sysctl : userns_sysctls(facts))
    report.line(!sysctl.forbids, sysctl.name + " = " + sysctl.value, "run: " + sysctl.fix);
  report.line(unshare_errno == 0, "unshare(CLONE_NEWUSER) works",
              userns_cause_and_fix(facts) + " (or run blocks with --no-sandbox)");
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
  }
  auto home = stackie_home(current_environment());
  if (home.ok()) {
    auto settings = load_settings(config_path(*home));
    std::string root = storage_root(*home, settings.ok() ? *settings : Settings{});
    std::string probe = root + "/.doctor-probe";
    Status made = make_directories(root);
    FILE* f = made.ok() ? std::fopen(probe.c_str(), "w") : nullptr;
    report.line(f != nullptr, "storage writable: " + root,
                (made.ok() ? "" : made.error().message + ": ") +
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
