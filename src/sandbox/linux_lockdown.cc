#include "sandbox/linux_lockdown.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace stackie::linux_sandbox {

void ExecPlan::finish() {
  std::sort(pass_fds.begin(), pass_fds.end());
  argv.clear();
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  envp.clear();
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
}

namespace {

bool drop_capabilities(ChildFailure* failure) {
  // The bounding set first (needs CAP_SETPCAP, which we still hold): without it a uid-0 block
  // would regain every capability of the namespace at its execve.
  for (int cap = 0; cap <= 63; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      // Without CAP_SETPCAP (the landlock backend: an ordinary process of the host's user
      // namespace) the bounding set cannot shrink; no_new_privs, set next, keeps execve from
      // granting anything it holds.
      if (errno == EPERM) break;
      *failure = {"drop bounding capabilities", errno};
      return false;
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    *failure = {"clear ambient capabilities", errno};
    return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) {
    *failure = {"drop capabilities", errno};
    return false;
  }
  return true;
}

// close_range around the fds passed on purpose (and the report fd, which keeps its CLOEXEC);
// the error fd is among the closed ones.
bool close_other_fds(const ExecPlan& plan, ChildFailure* failure) {
  unsigned int from = 3;
  bool report_kept = plan.report_fd < 3;
  auto keep = [&](int fd) {
    if (static_cast<unsigned int>(fd) > from) close_range(from, static_cast<unsigned>(fd) - 1, 0);
    from = std::max(from, static_cast<unsigned int>(fd) + 1);
  };
  for (int fd : plan.pass_fds) {
    if (!report_kept && plan.report_fd < fd) {
      keep(plan.report_fd);
      report_kept = true;
    }
    keep(fd);
    // A passed fd must survive execve even if the caller opened it O_CLOEXEC.
    if (fcntl(fd, F_SETFD, 0) != 0) {
      *failure = {"pass fd", errno};
      return false;
    }
  }
  if (!report_kept) keep(plan.report_fd);
  if (close_range(from, ~0U, 0) != 0) {
    *failure = {"close fds", errno};
    return false;
  }
  return true;
}

}  // namespace

void lockdown_and_exec(const ExecPlan& plan, ChildFailure* failure) {
  // Signals: the parent blocked them and installed handlers; the block starts clean.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sigismember(&plan.reset_signals, sig) == 1) signal(sig, SIG_DFL);
  }
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  umask(plan.umask_value);
  if (plan.parent_death_signal) prctl(PR_SET_PDEATHSIG, SIGKILL);

  // A new session: no controlling terminal, so TIOCSTI-style injection into the caller's
  // terminal is impossible even without the filter.
  if (plan.new_session && setsid() < 0) {
    *failure = {"setsid", errno};
    return;
  }
  // A terminal made for CMD alone (stackie exec's pty) becomes its controlling terminal, so
  // that ^C typed into it reaches CMD's foreground job. A terminal on fd 0-2 that cannot
  // (another session's: the caller's own, even behind a `setsid`) is refused: CMD would keep
  // the caller's terminal inside the sandbox.
  for (int fd = 0; plan.controlling_tty && fd <= 2; ++fd) {
    if (isatty(fd) && ioctl(fd, TIOCSCTTY, 0) != 0) {
      *failure = {kStepForeignTerminal, errno};
      return;
    }
  }
  if (!drop_capabilities(failure)) return;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *failure = {"no_new_privs", errno};
    return;
  }
  // Landlock needs no_new_privs (an unprivileged process), and the ruleset fd still open.
  if (plan.landlock_fd >= 0 && syscall(SYS_landlock_restrict_self, plan.landlock_fd, 0) != 0) {
    *failure = {"landlock", errno};
    return;
  }
  if (!close_other_fds(plan, failure)) return;
  // Seccomp last: everything above uses calls the filter refuses or would have to allow.
  if (int err = load_seccomp_filter()) {
    *failure = {"seccomp", err};
    return;
  }
  if (plan.deny_unix_sockets) {
    if (int err = load_unix_socket_filter()) {
      *failure = {"seccomp", err};
      return;
    }
  }
  execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
  *failure = {"exec", errno};
}

pid_t fork_locked_down(ExecPlan& plan, ChildFailure* failure) {
  *failure = {};
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return -errno;
  plan.report_fd = report[1];
  pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    lockdown_and_exec(plan, failure);
    // The step names are string literals: the same addresses in the parent, a copy of us.
    ssize_t ignored = write(report[1], failure, sizeof *failure);
    (void)ignored;
    _exit(std::strcmp(failure->step, "exec") == 0 ? exec_failure_exit_code(failure->errnum) : 125);
  }
  int err = errno;
  close(report[1]);
  plan.report_fd = -1;
  if (pid < 0) {
    close(report[0]);
    return -err;
  }
  // EOF: the child exec'ed (the pipe closed on execve); a whole record: it failed before.
  ChildFailure sent;
  ssize_t n;
  do n = read(report[0], &sent, sizeof sent);
  while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof sent)) *failure = sent;
  return pid;
}

int drop_privileges() {
  ChildFailure failure;
  if (!drop_capabilities(&failure)) return failure.errnum;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  return 0;
}

namespace {

struct SpawnArgs {
  const ExecPlan* plan;
  ChildFailure* failure;
};

int spawn_child(void* opaque) {
  auto* args = static_cast<SpawnArgs*>(opaque);
  lockdown_and_exec(*args->plan, args->failure);
  _exit(args->failure->step && std::strcmp(args->failure->step, "exec") == 0
            ? exec_failure_exit_code(args->failure->errnum)
            : 125);
}

}  // namespace

pid_t spawn_locked_down(const ExecPlan& plan, ChildFailure* failure) {
  // The child borrows our memory until execve (like posix_spawn): no page-table copy. Its own
  // stack, because the parent's frames must survive the child's calls.
  alignas(16) static char stack[64 * 1024];
  SpawnArgs args{&plan, failure};
  *failure = {};
  pid_t pid = clone(spawn_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  return pid < 0 ? -errno : pid;
}

}  // namespace stackie::linux_sandbox
