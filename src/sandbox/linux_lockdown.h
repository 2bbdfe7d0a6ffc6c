// The last steps before the block's execve (DESIGN.md §5.5, §5.6), run in the child of a
// clone(CLONE_VM|CLONE_VFORK) (a launch) or of a fork (a join): no allocation, no locks, only
// system calls on data prepared by the parent beforehand.
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
  bool controlling_tty = false;      // --join: a terminal on fd 0-2 becomes CMD's, or is refused
  int report_fd = -1;  // fork_locked_down's failure pipe: survives until execve (CLOEXEC)
  // The landlock backend (linux_landlock.h): the ruleset to restrict the child with, after
  // no_new_privs (-1: none), and the second seccomp filter that refuses unix sockets other than
  // socketpair (Landlock does not mediate connect(2) to a socket file on the host).
  int landlock_fd = -1;
  bool deny_unix_sockets = false;
  // Pointer arrays into args/env; filled by finish().
  std::vector<char*> argv;
  std::vector<char*> envp;
  void finish();
};

// Filled by the child when it fails before execve succeeds; read by the parent after the
// vfork-style clone returns (the memory is shared), or sent over a pipe after a fork.
// ChildFailure::step of a terminal on fd 0-2 that is another session's (controlling_tty).
inline constexpr const char kStepForeignTerminal[] = "controlling terminal";

struct ChildFailure {
  const char* step = nullptr;
  int errnum = 0;
};

// Drop capabilities (bounding, ambient, effective, permitted, inheritable), set no_new_privs,
// close every fd but 0-2 and the passed ones, setsid, load the seccomp filter last, execve.
// Returns only on failure, with `failure` filled.
void lockdown_and_exec(const ExecPlan& plan, ChildFailure* failure);

// A fork (no memory shared with the parent) running lockdown_and_exec; the failure, if any,
// comes back over a close-on-exec pipe. For --join: a child that enters a namespace where
// hostile processes already run must not expose the joiner's memory between dropping its
// capabilities (from then on a process of the namespace passes the ptrace access check) and
// execve. The fork inherits the joiner's non-dumpable mm, so /proc/PID/mem stays closed to the
// block until execve replaces it with CMD's own.
pid_t fork_locked_down(ExecPlan& plan, ChildFailure* failure);

// The joiner's own lockdown once its child runs: every capability of the block's user
// namespace dropped and no_new_privs; 0 or an errno.
int drop_privileges();

// Load the build-time compiled filter into the calling thread; 0 or an errno.
int load_seccomp_filter();
// The landlock backend's second filter (seccomp_gen.cc): socket(AF_UNIX) refused; 0 or errno.
int load_unix_socket_filter();

// The clone(CLONE_VM|CLONE_VFORK) spawn of a child running lockdown_and_exec. Returns the pid
// (the child has exec'ed or failed by then) or -errno; `failure` tells which.
pid_t spawn_locked_down(const ExecPlan& plan, ChildFailure* failure);

}  // namespace stackie::linux_sandbox
