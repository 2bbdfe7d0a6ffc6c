// The process tree of one sandbox (DESIGN.md §1):
//
//   caller (stackied) -> monitor (this process: new user+net ns, outside the pid ns)
//                          -> pid 1 (fork: builds the root, reaps, forwards signals)
//                               -> block (clone CLONE_VM|CLONE_VFORK, locked down, execve)
//
// Death is total: the monitor dies with its caller (PR_SET_PDEATHSIG), pid 1 dies with the
// monitor (PR_SET_PDEATHSIG), and when pid 1 dies the kernel kills the whole pid namespace,
// setsid-daemonised grandchildren included. The daemon ends a sandbox with kTreeKillSignal,
// not a SIGKILL of the monitor: the monitor SIGKILLs pid 1 and exits once pid 1 is reaped, which
// the kernel allows only after every process of the namespace is gone. So the monitor's exit,
// which the daemon reports as the block's, comes after the last of the block's processes.
//
// pid 1 is a fork, not a CLONE_VM child, so it shares no memory with the monitor: it stays
// dumpable (stackie-lockbox --join, run by the same user, may open its namespaces) while a
// block, holding no capability, still cannot read it through /proc/1/mem. The block shares pid
// 1's memory only until its execve.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/linux_launch.h"
#include "sandbox/linux_launch_common.h"
#include "sandbox/linux_limits.h"
#include "sandbox/linux_lockdown.h"
#include "sandbox/linux_namespaces.h"
#include "sandbox/linux_rootfs.h"

namespace stackie::linux_sandbox {
namespace {

const sigset_t& tree_kill_set() {
  static const sigset_t set = [] {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, kTreeKillSignal);
    return s;
  }();
  return set;
}

// The monitor's tree kill, blocked from its start (the monitor takes it with signalfd once
// pid 1 exists); pid 1 and the block get it unblocked.
void tree_kill_blocked(bool blocked) {
  sigprocmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &tree_kill_set(), nullptr);
}

// A tree kill that came while the sandbox was being made: there is no pid 1 to end yet.
bool tree_kill_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  return sigismember(&pending, kTreeKillSignal) == 1;
}

// pid 1: finish the sandbox, start the block, then be its init.
[[noreturn]] void run_init(const LaunchRequest& request, int lifeline) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  tree_kill_blocked(false);
  if (request.net.fd >= 0) close(request.net.fd);  // the monitor's alone
  // The monitor may have died before the line above; then the lifeline pipe is widowed.
  pollfd check{lifeline, POLLIN, 0};
  if (poll(&check, 1, 0) == 1 && (check.revents & (POLLHUP | POLLERR))) _exit(kExitSetupFailed);
  // pid 1 in its own session: the terminal's ^C reaches the monitor only, which forwards it
  // once (otherwise the block would get it twice).
  setsid();
  install_forwarding_handlers();

  mode_t caller_umask = umask(0);  // /dev/shm and /tmp get exactly the modes we ask for
  if (auto error = build_root_and_pivot(request.policy)) {
    report(request.sink, *error);
    _exit(kExitSetupFailed);
  }

  ExecPlan plan;
  plan.path = resolve_command(request.command[0], request.policy);
  plan.args = request.command;
  for (const auto& [name, value] : request.policy.environment)
    plan.env.push_back(name + "=" + value);
  plan.pass_fds = request.policy.pass_fds;
  plan.reset_signals = handled_signals();
  plan.umask_value = caller_umask;
  plan.finish();

  ChildFailure failure;
  pid_t block = spawn_locked_down(plan, &failure);
  if (block < 0) {
    report(request.sink, setup_error("fork", -block, "start the block"));
    _exit(kExitSetupFailed);
  }
  if (failure.step) {
    int status = 0;
    waitpid(block, &status, 0);
    report(request.sink, describe_child_failure(failure, request.command[0]));
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : kExitSetupFailed);
  }
  // The block runs: the caller sees EOF on the error fd once every copy is closed.
  if (request.sink.error_fd >= 0) close(request.sink.error_fd);
  close(lifeline);
  close_range(0, ~0U, 0);  // stdio and passed fds belong to the block now
  _exit(forward_until_exit(block, {.reap_all = true}));
}

}  // namespace

int run_sandboxed(const LaunchRequest& request) {
  // Taken, not fatal: the monitor of a sandbox stopped while it is being made exits 137, as one
  // stopped later does (a default action would say "killed by SIGPWR").
  tree_kill_blocked(true);
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) return kExitSetupFailed;  // the caller is already gone
  // A caller that died before getppid() above (between its exec of us and here: longer under
  // ASan) left us re-parented already, and PDEATHSIG will never fire. The daemon holds the only
  // reading end of the error pipe: POLLERR on our end means it is gone.
  if (request.sink.error_fd >= 0) {
    pollfd caller_alive{request.sink.error_fd, POLLOUT, 0};
    if (poll(&caller_alive, 1, 0) == 1 && (caller_alive.revents & POLLERR)) return kExitSetupFailed;
  }

  // Into the block's cgroup before any namespace exists: the cgroup namespace made below is
  // rooted there, and nothing of the sandbox ever runs outside it.
  if (request.cgroup_fd >= 0) {
    if (auto error = join_cgroup(request.cgroup_fd)) {
      report(request.sink, *error);
      return kExitSetupFailed;
    }
  }
  if (auto error = enter_new_namespaces(request.policy)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  // After the user namespace exists (RLIMIT_NPROC then counts this sandbox's processes only),
  // before pid 1 is forked (every process of the sandbox inherits them).
  if (request.cgroup_fd < 0) {
    if (auto error = apply_rlimits(request.policy.limits)) {
      report(request.sink, *error);
      return kExitSetupFailed;
    }
  }
  if (auto error = configure_namespaces(request.policy)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  if (request.net.fd >= 0 && request.policy.network == NetworkMode::host) {
    report(request.sink,
           setup_error("listen", EINVAL, "--net-fd needs a network namespace (not --net host)"));
    return kExitSetupFailed;
  }
  if (auto error = send_inside_listeners(request.net)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  // Blocked before the fork so no forwarded signal is lost in between; pid 1 inherits the mask.
  block_handled_signals();
  if (tree_kill_pending()) return 128 + SIGKILL;
  int lifeline[2];
  if (pipe2(lifeline, O_CLOEXEC) != 0) {
    report(request.sink, setup_error("fork", errno, "lifeline pipe"));
    return kExitSetupFailed;
  }
  pid_t init = fork();
  if (init == 0) {
    close(lifeline[1]);
    run_init(request, lifeline[0]);
  }
  close(lifeline[0]);
  if (init < 0) {
    report(request.sink, setup_error("fork", errno, "start pid 1"));
    return kExitSetupFailed;
  }
  // The monitor keeps only the lifeline; pid 1 reports from here on.
  if (request.sink.error_fd >= 0) close(request.sink.error_fd);
  for (int fd : request.policy.pass_fds) close(fd);
  // `network: localhost` (DESIGN.md §6): the monitor lives in the block's net ns and makes
  // the daemon's sockets there, between forwarded signals.
  return forward_until_exit(init, {.tree_kill = true, .net_fd = request.net.fd});
}

}  // namespace stackie::linux_sandbox
