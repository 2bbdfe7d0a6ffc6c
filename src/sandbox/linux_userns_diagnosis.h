// Why an unprivileged user namespace could not be created, and how to fix it (DESIGN.md §5 end).
// A pure function of the errno and the contents of the files that decide it, so `stackie doctor`
// can print the same text and tests can cover every cause without touching the host's sysctls.
#pragma once

#include <optional>
#include <string>

namespace stackie::linux_sandbox {

struct UsernsFacts {
  int errnum = 0;  // errno of unshare(CLONE_NEWUSER)
  std::optional<std::string>
      unprivileged_userns_clone;                   // /proc/sys/kernel/unprivileged_userns_clone
  std::optional<std::string> max_user_namespaces;  // /proc/sys/user/max_user_namespaces
  std::optional<std::string>
      apparmor_restrict;  // /proc/sys/kernel/apparmor_restrict_unprivileged_userns
};

// One paragraph: the cause, then "fix: ..." with the exact command.
std::string diagnose_userns_failure(const UsernsFacts& facts);

// Reads the files above from the running system (absent files stay nullopt).
UsernsFacts read_userns_facts(int errnum);

}  // namespace stackie::linux_sandbox
