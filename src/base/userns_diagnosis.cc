#include "base/userns_diagnosis.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stackie {
namespace {

std::string trimmed(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\n");
  return end == std::string::npos ? std::string() : text.substr(0, end + 1);
}

bool is(const std::optional<std::string>& value, const char* expected) {
  return value && trimmed(*value) == expected;
}

std::optional<std::string> read_small_file(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[64];
  ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n < 0) return std::nullopt;
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace

std::vector<UsernsSysctl> userns_sysctls(const UsernsFacts& facts) {
  std::vector<UsernsSysctl> out;
  if (const auto& v = facts.unprivileged_userns_clone)
    out.push_back({"kernel.unprivileged_userns_clone", trimmed(*v), is(v, "0"),
                   "the sysctl kernel.unprivileged_userns_clone is 0",
                   "sudo sysctl -w kernel.unprivileged_userns_clone=1 (persist it in "
                   "/etc/sysctl.d/)"});
  if (const auto& v = facts.max_user_namespaces)
    out.push_back({"user.max_user_namespaces", trimmed(*v), is(v, "0"),
                   "the sysctl user.max_user_namespaces is 0",
                   "sudo sysctl -w user.max_user_namespaces=15000 (persist it in /etc/sysctl.d/)"});
  if (const auto& v = facts.apparmor_restrict)
    out.push_back({"kernel.apparmor_restrict_unprivileged_userns", trimmed(*v), is(v, "1"),
                   "AppArmor restricts unprivileged user namespaces "
                   "(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10+)",
                   "install an AppArmor profile granting 'userns' to stackie-lockbox (see "
                   "stackie-lockbox(1)), or sudo sysctl -w "
                   "kernel.apparmor_restrict_unprivileged_userns=0"});
  return out;
}

std::string userns_cause_and_fix(const UsernsFacts& facts) {
  for (const UsernsSysctl& sysctl : userns_sysctls(facts))
    if (sysctl.forbids) return sysctl.cause + ". fix: " + sysctl.fix;
  if (facts.errnum == ENOSPC || facts.errnum == EUSERS)
    return "the limit user.max_user_namespaces (" +
           trimmed(facts.max_user_namespaces.value_or("?")) +
           ") is reached for this user or an enclosing namespace. fix: end unused sandboxes or "
           "raise it: sudo sysctl -w user.max_user_namespaces=15000";
  if (facts.errnum == EPERM)
    return "the kernel refused (EPERM); this usually means a container or a seccomp "
           "profile forbids unshare(CLONE_NEWUSER), or the process is in a chroot. fix: "
           "run on the host, or allow user namespaces in the container runtime (e.g. "
           "Docker --security-opt seccomp=unconfined)";
  if (facts.errnum == EINVAL)
    return "this kernel has no user namespace support (CONFIG_USER_NS). fix: use a "
           "kernel built with CONFIG_USER_NS=y";
  return std::string(std::strerror(facts.errnum)) +
         ". fix: check the sysctls user.max_user_namespaces and "
         "kernel.unprivileged_userns_clone";
}

std::string diagnose_userns_failure(const UsernsFacts& facts) {
  return "unprivileged user namespaces are unavailable, so no sandbox can be built and the "
         "command was not run: " +
         userns_cause_and_fix(facts);
}

UsernsFacts read_userns_facts(int errnum) {
  UsernsFacts facts;
  facts.errnum = errnum;
  facts.unprivileged_userns_clone = read_small_file("/proc/sys/kernel/unprivileged_userns_clone");
  facts.max_user_namespaces = read_small_file("/proc/sys/user/max_user_namespaces");
  facts.apparmor_restrict =
      read_small_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  return facts;
}

}  // namespace stackie
