#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "base/cgroup_v2.h"
#include "base/userns_diagnosis.h"
#include "cli/doctor_checks.h"

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

}  // namespace

std::vector<DoctorLine> sandbox_host_checks() {
  std::vector<DoctorLine> lines;
  // The lockbox's own diagnosis (base/userns_diagnosis.h), so both say the same thing.
  const int unshare_errno = unshare_user_errno();
  const UsernsFacts facts = read_userns_facts(unshare_errno);
  for (const UsernsSysctl& sysctl : userns_sysctls(facts))
    lines.push_back({!sysctl.forbids, sysctl.name + " = " + sysctl.value, "run: " + sysctl.fix});
  lines.push_back({unshare_errno == 0, "unshare(CLONE_NEWUSER) works",
                   userns_cause_and_fix(facts) + " (or run blocks with --no-sandbox)"});
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
