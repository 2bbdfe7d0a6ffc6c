// Why an unprivileged user namespace could not be created, and how to fix it (DESIGN.md §5 end).
// Pure functions of the errno and of the files that decide it, so that the lockbox's error and
// `stackie doctor` say the same thing, and tests cover every cause without touching the host's
// sysctls. In base because both the sandbox and the CLI use it, and the CLI may not link sandbox.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stackie {

struct UsernsFacts {
  int errnum = 0;  // errno of unshare(CLONE_NEWUSER)
  std::optional<std::string>
      unprivileged_userns_clone;                   // /proc/sys/kernel/unprivileged_userns_clone
  std::optional<std::string> max_user_namespaces;  // /proc/sys/user/max_user_namespaces
  std::optional<std::string>
      apparmor_restrict;  // /proc/sys/kernel/apparmor_restrict_unprivileged_userns
};

// A sysctl that decides whether unprivileged user namespaces work, as this host has it.
struct UsernsSysctl {
  std::string name;   // "kernel.unprivileged_userns_clone"
  std::string value;  // trimmed
  bool forbids = false;
  std::string cause;  // when it forbids: why, in a sentence
  std::string fix;    // when it forbids: the command that lifts it
};

// The sysctls present in `facts`, in the order the diagnosis weighs them.
std::vector<UsernsSysctl> userns_sysctls(const UsernsFacts& facts);

// "CAUSE. fix: COMMAND", for a host where unshare(CLONE_NEWUSER) failed with facts.errnum.
std::string userns_cause_and_fix(const UsernsFacts& facts);

// One paragraph for a command that could not run: the consequence, the cause, then
// "fix: ..." with the exact command.
std::string diagnose_userns_failure(const UsernsFacts& facts);

// Reads the files above from the running system (absent files stay nullopt).
UsernsFacts read_userns_facts(int errnum);

}  // namespace stackie
