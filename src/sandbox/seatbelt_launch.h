// The macOS lockbox (DESIGN.md §5b): run a command inside a Seatbelt profile, and make sure
// that nothing of it outlives the block. macOS has no pid namespace, so "total death" is the
// monitor's job: this process stays outside the sandbox, tracks every descendant of the block
// (seatbelt_descendants.h) and kills the whole set when the block's main process ends, when
// the daemon asks (a byte on the lifeline) and when the daemon dies (end of file on it).
// Compiled only when sandbox=seatbelt.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"
#include "sandbox/setup_error.h"

namespace stackie::seatbelt {

struct LaunchRequest {
  SandboxPolicy policy;  // validated
  std::vector<std::string> command;
  ErrorSink sink;        // close-on-exec; the monitor closes its copy once the block runs
  int lifeline_fd = -1;  // -1: no daemon watches (a manual run); the monitor still tracks
};

// Returns the exit code stackie-lockbox exits with: the block's main process's own (128+N for
// signal N), 125 when the sandbox could not be built, 126/127 when exec failed.
int run_sandboxed(const LaunchRequest& request);

}  // namespace stackie::seatbelt
