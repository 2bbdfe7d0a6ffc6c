#include <unistd.h>

#include <cstdio>

#include "cli/cli.h"
#include "cli/doctor_checks.h"

namespace stackie::cli {

// Seatbelt is part of every macOS; what can be missing is a system where it was stripped or
// replaced. /usr/bin/sandbox-exec ships with it, so its presence is the cheap sign.
std::vector<DoctorLine> sandbox_host_checks() {
  bool seatbelt = ::access("/usr/bin/sandbox-exec", X_OK) == 0;
  return {{seatbelt, "Seatbelt present (/usr/bin/sandbox-exec)",
           "this macOS has no Seatbelt: run blocks with --no-sandbox"}};
}

// Seatbelt needs no setup a command could make.
int print_sandbox_fix() {
  std::printf("# Seatbelt needs no setup on macOS: nothing to install.\n");
  return kExitOk;
}

// The macOS lockbox applies no memory, pids or cpu limit yet (docs/platforms.md).
std::string limits_enforcement_here() {
  return "none (limits are enforced on Linux only)";
}

}  // namespace stackie::cli
