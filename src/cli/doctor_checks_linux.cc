#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/cgroup_v2.h"
#include "base/directories.h"
#include "base/fs_path.h"
#include "base/sandbox_probe.h"
#include "base/userns_diagnosis.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/doctor_checks.h"
#include "stack/paths.h"
#include "stack/settings.h"

namespace stackie::cli {

namespace {

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

// The installed profile (share/apparmor), next to a relocated install or at the build's prefix.
std::string apparmor_profile_path() {
  std::string relocated = relocated_install_dir(STACKIE_INSTALL_DATADIR "/stackie");
  if (!relocated.empty() && ::access((relocated + "/apparmor/stackie-lockbox").c_str(), R_OK) == 0)
    return relocated + "/apparmor/stackie-lockbox";
  return std::string(STACKIE_DATADIR) + "/apparmor/stackie-lockbox";
}

bool apparmor_restricts_userns() {
  std::ifstream file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  std::string value;
  return file >> value && value == "1";
}

// Which backend a daemon started from here gives blocks, and what that costs.
void add_backend_lines(std::vector<DoctorLine>& lines) {
  BackendChoice choice = choose_linux_backend();
  std::string configured = "auto";
  if (auto home = stackie_home(current_environment()); home.ok())
    if (auto settings = load_settings(config_path(*home)); settings.ok())
      configured = settings->sandbox_backend;
  std::string landlock = "landlock ABI " + std::to_string(choice.landlock_abi);
  std::string fix = apparmor_restricts_userns()
                        ? "AppArmor restricts user namespaces: `stackie doctor --fix` prints the "
                          "one sudo command that installs stackie-lockbox's profile"
                        : "see the user namespace line above";
  lines.push_back({choice.probe.works,
                   "namespace lockbox can run (user + mount namespace, uid map, mount)",
                   "failed at " + choice.probe.step + ": " + std::strerror(choice.probe.errnum) +
                       "; blocks fall back to the landlock backend. " + fix});
  bool landlock_chosen = configured == "landlock" ||
                         (configured == "auto" && choice.backend == LinuxBackend::landlock);
  if (!landlock_chosen) {
    lines.push_back(
        {true, "sandbox backend: namespaces (" + landlock + " available as fallback)", ""});
    return;
  }
  lines.push_back(
      {choice.landlock_abi >= 1,
       "sandbox backend: landlock (" + landlock +
           (configured == "landlock" ? ", set in config.toml" : ", chosen automatically") +
           "): weaker than the namespace lockbox: blocks see the host's processes, "
           "hostname, uid and account names, may send UDP, and bind served ports on every "
           "host address" +
           (choice.landlock_abi < 4 ? "; ABI < 4: TCP is not restricted at all" : "") +
           (choice.landlock_abi < 6 ? "; ABI < 6: signals to host processes are not scoped" : ""),
       "this kernel has no Landlock either: only --no-sandbox remains"});
}

}  // namespace

int print_sandbox_fix() {
  std::string profile = apparmor_profile_path();
  if (!apparmor_restricts_userns())
    std::printf("# AppArmor does not restrict user namespaces on this host: nothing to install.\n");
  if (::access(profile.c_str(), R_OK) != 0) {
    std::fprintf(stderr,
                 "stackie: doctor --fix: no AppArmor profile at %s (installed by `meson "
                 "install`)\n",
                 profile.c_str());
    return kExitFailed;
  }
  std::printf(
      "sudo sh -c 'install -m 644 %s /etc/apparmor.d/stackie-lockbox && "
      "apparmor_parser -r /etc/apparmor.d/stackie-lockbox'\n",
      profile.c_str());
  return kExitOk;
}

std::vector<DoctorLine> sandbox_host_checks() {
  std::vector<DoctorLine> lines;
  // The lockbox's own diagnosis (base/userns_diagnosis.h), so both say the same thing.
  const int unshare_errno = unshare_user_errno();
  const UsernsFacts facts = read_userns_facts(unshare_errno);
  for (const UsernsSysctl& sysctl : userns_sysctls(facts))
    lines.push_back({!sysctl.forbids, sysctl.name + " = " + sysctl.value, "run: " + sysctl.fix});
  lines.push_back({unshare_errno == 0, "unshare(CLONE_NEWUSER) works",
                   userns_cause_and_fix(facts) + " (or run blocks with --no-sandbox)"});
  add_backend_lines(lines);
  std::string seccomp;
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);)
    if (l.rfind("Seccomp:", 0) == 0) seccomp = l;
  lines.push_back({!seccomp.empty(),
                   "seccomp available (" + (seccomp.empty() ? "no Seccomp field" : seccomp) + ")",
                   "a kernel built with CONFIG_SECCOMP_FILTER"});
  return lines;
}

std::string limits_enforcement_here() {
  auto cgroup = find_delegated_cgroup();
  return cgroup.ok() ? "cgroup v2 (" + cgroup->dir + ")"
                     : "rlimits (no delegated cgroup: " + cgroup.error().message + ")";
}

}  // namespace stackie::cli
