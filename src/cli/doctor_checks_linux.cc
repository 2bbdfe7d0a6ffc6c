#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include "cli/doctor_checks.h"

namespace stackie::cli {

namespace {

// The first line of a /proc file, or nullopt when the file does not exist.
std::optional<std::string> read_line(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  return line;
}

bool can_unshare_user() {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::vector<DoctorLine> sandbox_host_checks() {
  std::vector<DoctorLine> lines;
  if (auto v = read_line("/proc/sys/kernel/unprivileged_userns_clone"))
    lines.push_back({*v != "0", "kernel.unprivileged_userns_clone = " + *v,
                     "run: sysctl -w kernel.unprivileged_userns_clone=1"});
  if (auto v = read_line("/proc/sys/user/max_user_namespaces"))
    lines.push_back({*v != "0", "user.max_user_namespaces = " + *v,
                     "run: sysctl -w user.max_user_namespaces=15000"});
  if (auto v = read_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
    lines.push_back(
        {*v == "0", "kernel.apparmor_restrict_unprivileged_userns = " + *v,
         "run: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor "
         "profile for stackie-lockbox)"});
  lines.push_back({can_unshare_user(), "unshare(CLONE_NEWUSER) works",
                   "enable unprivileged user namespaces, or run blocks with --no-sandbox"});
  std::string seccomp;
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);)
    if (l.rfind("Seccomp:", 0) == 0) seccomp = l;
  lines.push_back({!seccomp.empty(),
                   "seccomp available (" + (seccomp.empty() ? "no Seccomp field" : seccomp) + ")",
                   "a kernel built with CONFIG_SECCOMP_FILTER"});
  return lines;
}

}  // namespace stackie::cli
