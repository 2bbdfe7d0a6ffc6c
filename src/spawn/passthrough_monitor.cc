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

}  // namespace

int run_passthrough_monitor(int argc, char** argv) {
  if (argc < 5 || std::strcmp(argv[3], "--") != 0) {
    std::fprintf(stderr, "stackied %s: usage: DAEMON_PID -- CMD...\n", kPassthroughMonitorFlag);
    return 127;
  }
  pid_t daemon = static_cast<pid_t>(std::atol(argv[2]));
  // Every signal waits for sigwait: the stop signal the daemon sends to the group is for
  // the block, not for us.
  sigset_t all, before;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &before);
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, kParentDied);
#endif
  if (::getppid() != daemon) kill_group();  // it died before the prctl
  pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "stackied %s: fork: %s\n", kPassthroughMonitorFlag, std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    ::execvp(argv[4], argv + 4);
    int saved = errno;
    std::fprintf(stderr, "stackie: cannot run %s: %s\n", argv[4], std::strerror(saved));
    std::_Exit(saved == ENOENT ? 127 : 126);
  }
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
