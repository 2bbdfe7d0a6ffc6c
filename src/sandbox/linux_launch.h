// The Linux lockbox (DESIGN.md §1, §5): run a command inside a fresh namespace sandbox, or join
// the sandbox of a running block. Both return the exit code stackie-lockbox must exit with; the
// sandbox's own processes never return from here.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <optional>

#include <string>
#include <vector>

#include "policy/policy.h"
#include "sandbox/linux_net_control.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

struct LaunchRequest {
  SandboxPolicy policy;  // validated
  std::vector<std::string> command;
  ErrorSink sink;  // the error fd is closed in the block (it must be O_CLOEXEC or is closed)
  NetControl net;  // the monitor's net channel (`network: localhost`); unused by --join
  // The block's cgroup v2 directory (--cgroup-fd), made and limited by the daemon; -1: the
  // policy's limits are applied as rlimits instead (linux_limits.h).
  int cgroup_fd = -1;
};

// Process tree: this process becomes the monitor (inside the new user and net namespaces,
// outside the pid namespace), forks pid 1 of the new pid namespace, which builds the root, then
// starts the block with clone(CLONE_VM|CLONE_VFORK).
int run_sandboxed(const LaunchRequest& request);

// In a zygote's spare whose pid namespace is made ahead (pid_namespace_made_ahead): forks that
// namespace's pid 1 now, to wait for the request that run_sandboxed hands it (linux_init_ahead.h).
// Nothing is forked when that fails; run_sandboxed then forks pid 1 itself.
void fork_init_ahead();

// The landlock backend (linux_launch_landlock.cc): the monitor is this process, a subreaper;
// the block is its landlocked child. No namespace is made.
int run_landlocked(const LaunchRequest& request);

// `--join PID` of a landlock monitor (one that keeps its policy for joiners): the exit code,
// or nullopt when PID is not one (then it is joined as a namespace sandbox).
std::optional<int> join_landlocked(pid_t pid, const LaunchRequest& request);

// Sent to a monitor to end its sandbox, then exit once every process of it is gone: a
// namespace monitor SIGKILLs pid 1 and waits for it; a landlock monitor (where it is also the
// parent-death signal) kills the block's whole tree. Not one of the forwarded signals.
inline constexpr int kTreeKillSignal = SIGPWR;

// `--join PID`: PID is a monitor (its child, the sandbox's pid 1, is the target) or any process
// inside a sandbox. Only the policy's environment and working directory are used.
int join_sandbox(pid_t pid, const LaunchRequest& request);

}  // namespace stackie::linux_sandbox
