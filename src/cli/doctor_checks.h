// What `stackie doctor` checks of the host's sandbox support: one file per platform
// (doctor_checks_linux.cc: user namespaces and seccomp; doctor_checks_macos.cc: Seatbelt).
#pragma once

#include <string>
#include <vector>

namespace stackie::cli {

struct DoctorLine {
  bool ok = false;
  std::string what;
  std::string fix;  // shown on FAIL
};

std::vector<DoctorLine> sandbox_host_checks();

// `stackie doctor --fix`: prints the one command that makes the sandbox run here (Linux: the
// AppArmor profile install), or says there is none. Runs nothing. Its exit status.
int print_sandbox_fix();

// How a daemon started from here would enforce blocks' `limits` (asked when no daemon
// answers): Linux "cgroup v2 (DIR)" or "rlimits (no delegated cgroup: WHY)".
std::string limits_enforcement_here();

}  // namespace stackie::cli
