#include "spawn/passthrough_monitor.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/posix_io.h"

namespace stackie {

namespace {

// The signal the kernel sends us when the daemon dies. Not SIGKILL: we must live long enough
// to kill the group. A block may send it to its own group too; then the daemon is still our
// parent and it is ignored.
constexpr int kParentDied = SIGUSR2;

[[noreturn]] void kill_group() {
  ::kill(0, SIGKILL);  // the whole process group, us included
  std::_Exit(137);
}

// Dies as the child did (the daemon reads our wait status as the block's), without a core.
[[noreturn]] void die_like(int status) {
  if (WIFEXITED(status)) std::_Exit(WEXITSTATUS(status));
  int signum = WTERMSIG(status);
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(signum, SIG_DFL);
  sigset_t just;
  sigemptyset(&just);
  sigaddset(&just, signum);
  ::kill(::getpid(), signum);
  ::sigprocmask(SIG_UNBLOCK, &just, nullptr);
  std::_Exit(128 + signum);  // a signal that does not kill (never for the child's own)
}

// A signal sent to the group before the fork reached only us (blocked, pending): the block
// would never see it, and a `down` right after `up` waited stop_timeout for nothing. Which of
// our pending signals came before the fork is decided by the order of two sigpending calls:
// ours after the fork (`ours`, sent through the pipe), then the child's once it has read them.
// A signal in ours but not in the child's arrived before the fork (one sent after it is pending
// in both, as the child blocks everything until exec): the child raises it for itself.
void send_pending_to(int fd) {
  sigset_t ours;
  sigpending(&ours);
  ssize_t ignored = ::write(fd, &ours, sizeof ours);  // < PIPE_BUF: whole, never blocks
  (void)ignored;
  ::close(fd);
}

void raise_missed_signals(int fd) {
  sigset_t parents;
  ssize_t got = 0;
  do {
    got = ::read(fd, &parents, sizeof parents);
  } while (got < 0 && errno == EINTR);
  ::close(fd);
  // Short only if the monitor died before writing: by the group's SIGKILL, which takes us too.
  if (got != static_cast<ssize_t>(sizeof parents)) return;
  sigset_t mine;
  sigpending(&mine);
  for (int signum = 1; signum < NSIG; ++signum) {
    if (signum == SIGCHLD || signum == SIGKILL || signum == SIGSTOP) continue;
    if (sigismember(&parents, signum) == 1 && sigismember(&mine, signum) != 1)
      ::kill(::getpid(), signum);
  }
}

}  // namespace

int run_passthrough_monitor(int argc, char** argv) {
  if (argc < 5 || std::strcmp(argv[3], "--") != 0) {
    std::fprintf(stderr, "stackied %s: usage: DAEMON_PID -- CMD...\n", kPassthroughMonitorFlag);
    return 127;
  }
  pid_t daemon = static_cast<pid_t>(std::atol(argv[2]));
  // Every signal waits for sigwait: the stop signal the daemon sends to the group is for
  // the block, not for us.
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, kParentDied);
#endif
  if (::getppid() != daemon) kill_group();  // it died before the prctl
  int handover[2];
  if (pipe_cloexec(handover) != 0) {
    std::fprintf(stderr, "stackied %s: pipe: %s\n", kPassthroughMonitorFlag, std::strerror(errno));
    return 127;
  }
  pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "stackied %s: fork: %s\n", kPassthroughMonitorFlag, std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    ::close(handover[1]);
    raise_missed_signals(handover[0]);
    // The block starts with no signal blocked, whatever our parent left us (as systemd does).
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(argv[4], argv + 4);
    int saved = errno;
    std::fprintf(stderr, "stackie: cannot run %s: %s\n", argv[4], std::strerror(saved));
    std::_Exit(saved == ENOENT ? 127 : 126);
  }
  ::close(handover[0]);
  send_pending_to(handover[1]);
  // sigwait, not sigwaitinfo: macOS has only the former, and the number is all we need.
  // macOS has no PR_SET_PDEATHSIG either: there the group outlives a SIGKILLed daemon
  // (docs/platforms.md).
  for (;;) {
    int signo = 0;
    if (::sigwait(&all, &signo) != 0) continue;
    if (signo == kParentDied && ::getppid() != daemon) kill_group();
    if (signo != SIGCHLD) continue;
    int status = 0;
    pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) die_like(status);
  }
}

}  // namespace stackie
