// The last steps before the block's execve (DESIGN.md §5.5, §5.6), run in the child of a
// clone(CLONE_VM|CLONE_VFORK): no allocation, no locks, only system calls on data prepared by
// the parent beforehand.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "policy/policy.h"
#include "sandbox/command_path.h"

namespace stackie::linux_sandbox {

// Everything execve needs, built before the clone.
struct ExecPlan {
  std::string path;  // resolved program
  std::vector<std::string> args;
  std::vector<std::string> env;  // "NAME=VALUE"
  std::vector<int> pass_fds;     // sorted, >= 3
  sigset_t reset_signals;        // handlers the parent installed: back to SIG_DFL
  mode_t umask_value = 022;
  bool new_session = true;
  bool parent_death_signal = false;  // --join: CMD dies with the joining lockbox
  // Pointer arrays into args/env; filled by finish().
  std::vector<char*> argv;
  std::vector<char*> envp;
  void finish();
};

// Filled by the child when it fails before execve succeeds; read by the parent after the
// vfork-style clone returns (the memory is shared).
struct ChildFailure {
  const char* step = nullptr;
  int errnum = 0;
};

// Drop capabilities (bounding, ambient, effective, permitted, inheritable), set no_new_privs,
// close every fd but 0-2 and the passed ones, setsid, load the seccomp filter last, execve.
// Returns only on failure, with `failure` filled.
void lockdown_and_exec(const ExecPlan& plan, ChildFailure* failure);

// Load the build-time compiled filter into the calling thread; 0 or an errno.
int load_seccomp_filter();


// The clone(CLONE_VM|CLONE_VFORK) spawn of a child running lockdown_and_exec. Returns the pid
// (the child has exec'ed or failed by then) or -errno; `failure` tells which.
pid_t spawn_locked_down(const ExecPlan& plan, ChildFailure* failure);


}  // namespace stackie::linux_sandbox
