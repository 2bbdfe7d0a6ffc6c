#include "sandbox/linux_launch_common.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/linux_launch.h"
#include "sandbox/linux_net_control.h"

namespace stackie::linux_sandbox {
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

void ignore_signal(int) {}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitSetupFailed;
}

}  // namespace

const sigset_t& handled_signals() {
  static const sigset_t set = [] {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : kForwarded) sigaddset(&s, sig);
    sigaddset(&s, SIGCHLD);
    return s;
  }();
  return set;
}

void block_handled_signals() {
  sigprocmask(SIG_BLOCK, &handled_signals(), nullptr);
}

void install_forwarding_handlers() {
  struct sigaction action {};
  action.sa_handler = ignore_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &action, nullptr);
  sigaction(SIGCHLD, &action, nullptr);
}

int forward_until_exit(pid_t child, const Forwarding& forwarding) {
  sigset_t taken = handled_signals();
  if (forwarding.tree_kill) {
    // Blocked since the monitor's start (linux_launch.cc run_sandboxed): one sent before this
    // signalfd existed is pending and read below.
    sigaddset(&taken, kTreeKillSignal);
  }
  int net_fd = forwarding.net_fd;
  int sfd = signalfd(-1, &taken, SFD_CLOEXEC);
  for (;;) {
    // Reap first: the child may have exited before the signalfd existed.
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(forwarding.reap_all ? -1 : child, &status, WNOHANG)) > 0) {
      if (pid == child) {
        if (sfd >= 0) close(sfd);
        return exit_code(status);
      }
    }
    if (pid < 0 && errno == ECHILD) return kExitSetupFailed;
    int sig = 0;
    if (sfd < 0) {  // no signalfd (fd limit): fall back to waiting synchronously
      siginfo_t si;
      sig = sigwaitinfo(&taken, &si);
    } else {
      if (net_fd >= 0) {
        pollfd fds[2] = {{sfd, POLLIN, 0}, {net_fd, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) continue;  // EINTR
        if (fds[1].revents != 0 && !serve_net_request(net_fd)) {
          // The daemon closed its end: no more sockets to make; the block runs on.
          close(net_fd);
          net_fd = -1;
        }
        if ((fds[0].revents & POLLIN) == 0) continue;
      }
      signalfd_siginfo info;
      if (read(sfd, &info, sizeof info) != sizeof info) continue;  // EINTR
      sig = static_cast<int>(info.ssi_signo);
    }
    if (sig <= 0 || sig == SIGCHLD) continue;
    kill(child, forwarding.tree_kill && sig == kTreeKillSignal ? SIGKILL : sig);
  }
}

SetupError describe_child_failure(const ChildFailure& failure, const std::string& command) {
  if (std::strcmp(failure.step, "exec") == 0) {
    const char* what = exec_failure_exit_code(failure.errnum) == kExitNotFound
                           ? ": not found inside the sandbox"
                           : ": cannot be executed";
    return setup_error("exec", failure.errnum, command + what);
  }
  if (std::strcmp(failure.step, kStepForeignTerminal) == 0)
    return setup_error("join", failure.errnum,
                       "a terminal on fd 0-2 is the caller's terminal (another session's), "
                       "which CMD would keep inside the sandbox; run it through `stackie "
                       "exec`, which gives CMD a terminal of its own");
  return setup_error(failure.step, failure.errnum, std::string("before exec: ") + failure.step);
}

}  // namespace stackie::linux_sandbox
