// The process tree of one sandbox (DESIGN.md §1):
//
//   caller (stackied) -> monitor (this process: new user+net ns, outside the pid ns)
//                          -> pid 1 (fork: builds the root, reaps, forwards signals)
//                               -> block (clone CLONE_VM|CLONE_VFORK, locked down, execve)
//
// In a zygote's spare, pid 1 is forked before the request comes (fork_init_ahead,
// linux_init_ahead.h) and is handed it where the monitor would fork.
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
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/linux_init_ahead.h"
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

// pid 1's first steps, right after its fork (on the spot, or ahead: fork_init_ahead).
void init_prologue() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // pid 1 in its own session: the terminal's ^C reaches the monitor only, which forwards it
  // once (otherwise the block would get it twice).
  setsid();
  install_forwarding_handlers();
}

// pid 1, its request at hand: finish the sandbox, start the block, then be its init.
[[noreturn]] void run_init(const LaunchRequest& request, int lifeline) {
  tree_kill_blocked(false);
  if (request.net.fd >= 0) close(request.net.fd);  // the monitor's alone
  // The monitor may have died before PR_SET_PDEATHSIG; then the lifeline is widowed.
  pollfd check{lifeline, POLLIN, 0};
  if (poll(&check, 1, 0) == 1 && (check.revents & (POLLHUP | POLLERR))) _exit(kExitSetupFailed);

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

// pid 1 forked ahead (linux_init_ahead.h), once its request came: what the monitor does before
// it forks pid 1 on the spot, pid 1 now does for itself.
[[noreturn]] void run_init_ahead(int sock) {
  auto request = receive_hand_over(&sock);
  if (!request) _exit(kExitSetupFailed);  // the monitor failed before, or is gone
  // The mount namespace is a copy of the host's mounts as they are now, not when the spare was
  // made (linux_namespaces.cc says why); the cgroup one is rooted where the monitor is.
  if (unshare(CLONE_NEWNS | CLONE_NEWCGROUP) != 0) {
    report(request->sink, setup_error("unshare", errno, "make the mount and cgroup namespaces"));
    _exit(kExitSetupFailed);
  }
  if (auto error = apply_rlimits(request->policy.limits)) {
    report(request->sink, *error);
    _exit(kExitSetupFailed);
  }
  run_init(*request, sock);
}

// The monitor's part of the sandbox, before pid 1 runs: the cgroup, the namespaces (the mount
// and cgroup ones are pid 1's own when it was forked ahead), the rlimits, the hostname and the
// listeners of `network: localhost`.
std::optional<SetupError> prepare_namespaces(const LaunchRequest& request, const InitAhead& ahead) {
  // Into the block's cgroup before any namespace exists: the cgroup namespace made below is
  // rooted there, and nothing of the sandbox ever runs outside it.
  if (request.cgroup_fd >= 0) {
    if (auto error = join_cgroup(request.cgroup_fd)) return error;
  }
  if (auto error = enter_new_namespaces(request.policy, /*mount_and_cgroup=*/ahead.pid < 0))
    return error;
  // After the user namespace exists (RLIMIT_NPROC then counts this sandbox's processes only),
  // before pid 1 is forked (every process of the sandbox inherits them; pid 1 forked ahead
  // sets its own).
  if (request.cgroup_fd < 0 && ahead.pid < 0) {
    if (auto error = apply_rlimits(request.policy.limits)) return error;
  }
  if (auto error = configure_namespaces(request.policy)) return error;
  if (request.net.fd >= 0 && request.policy.network == NetworkMode::host)
    return setup_error("listen", EINVAL, "--net-fd needs a network namespace (not --net host)");
  return send_inside_listeners(request.net);
}

// pid 1 forked on the spot, with a pipe for its lifeline (the monitor's end stays open for its
// whole life). -1 after a reported failure.
pid_t fork_init(const LaunchRequest& request) {
  int lifeline[2];
  if (pipe2(lifeline, O_CLOEXEC) != 0) {
    report(request.sink, setup_error("fork", errno, "lifeline pipe"));
    return -1;
  }
  const pid_t init = fork();
  if (init == 0) {
    close(lifeline[1]);
    init_prologue();
    run_init(request, lifeline[0]);
  }
  close(lifeline[0]);
  if (init < 0) report(request.sink, setup_error("fork", errno, "start pid 1"));
  return init;
}

// A monitor that fails before it hands its request to pid 1 forked ahead ends that pid 1 too,
// and waits for it: the daemon is told that the sandbox is gone (report_sandbox_gone) only once
// nothing of it is left.
void end_init_ahead(const InitAhead& ahead) {
  if (ahead.pid < 0) return;
  kill(ahead.pid, SIGKILL);
  waitpid(ahead.pid, nullptr, 0);
}

}  // namespace

void fork_init_ahead() {
  if (init_ahead().pid >= 0) return;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
  // The mask pid 1 gets from a monitor's fork: the tree kill and the forwarded signals blocked,
  // from its first instruction (none of the zygote's own).
  sigset_t mask = handled_signals();
  sigaddset(&mask, kTreeKillSignal);
  sigset_t saved;
  sigprocmask(SIG_BLOCK, &mask, &saved);
  const pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    const int sock = pair[1];
    // Nothing of the zygote's stays open: the block's stdio and fds come with the request.
    if (sock > 0) close_range(0, static_cast<unsigned>(sock) - 1, 0);
    close_range(static_cast<unsigned>(sock) + 1, ~0U, 0);
    init_prologue();
    run_init_ahead(sock);
  }
  sigprocmask(SIG_SETMASK, &saved, nullptr);
  close(pair[1]);
  if (pid < 0) {
    close(pair[0]);
    return;
  }
  init_ahead() = InitAhead{pid, pair[0]};
}

int run_sandboxed(const LaunchRequest& request) {
  // Taken, not fatal: the monitor of a sandbox stopped while it is being made exits 137, as one
  // stopped later does (a default action would say "killed by SIGPWR").
  tree_kill_blocked(true);
  const InitAhead ahead = init_ahead();
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) {  // the caller is already gone
    end_init_ahead(ahead);
    return kExitSetupFailed;
  }
  // A caller that died before getppid() above (between its exec of us and here: longer under
  // ASan) left us re-parented already, and PDEATHSIG will never fire. The daemon holds the only
  // reading end of the error pipe: POLLERR on our end means it is gone.
  if (request.sink.error_fd >= 0) {
    pollfd caller_alive{request.sink.error_fd, POLLOUT, 0};
    if (poll(&caller_alive, 1, 0) == 1 && (caller_alive.revents & POLLERR)) {
      end_init_ahead(ahead);
      return kExitSetupFailed;
    }
  }

  if (auto error = prepare_namespaces(request, ahead)) {
    report(request.sink, *error);
    end_init_ahead(ahead);
    return kExitSetupFailed;
  }
  // Blocked before pid 1 runs so no forwarded signal is lost in between; pid 1 has the mask.
  block_handled_signals();
  if (tree_kill_pending()) {
    end_init_ahead(ahead);
    return 128 + SIGKILL;
  }
  pid_t init = ahead.pid;
  if (init >= 0) {
    if (auto error = hand_over(ahead, request)) {
      report(request.sink, *error);
      end_init_ahead(ahead);
      return kExitSetupFailed;
    }
  } else if (init = fork_init(request); init < 0) {
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
