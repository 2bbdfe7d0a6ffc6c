#include "sandbox/seatbelt_launch.h"

#include <signal.h>
#include <sys/event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/command_path.h"
#include "sandbox/seatbelt_apply.h"
#include "sandbox/seatbelt_descendants.h"
#include "sandbox/seatbelt_paths.h"

namespace stackie::seatbelt {

namespace {

// What the daemon's stop signal may be; the monitor forwards them to the block's main process.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 125;
}

// The block's side of the fork: own session (so that a stray kill of the monitor's group
// misses it, and the sweep knows its session), wait until the monitor watches it, then enter
// the profile and exec. Never returns.
[[noreturn]] void run_block(const LaunchRequest& request, const std::string& program, int go_fd) {
  for (int signum : kForwarded) signal(signum, SIG_DFL);  // SIG_IGN would survive the exec
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (request.lifeline_fd >= 0) close(request.lifeline_fd);
  if (setsid() < 0) {
    report(request.sink, setup_error("setsid", errno, "new session for the block"));
    _exit(kExitSetupFailed);
  }
  char go = 0;
  ssize_t n;
  do n = read(go_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  close(go_fd);
  if (n != 1) _exit(kExitSetupFailed);  // the monitor is gone: nobody would watch the block
  Status ran = seatbelt_apply_and_exec(request.policy, program, request.command);
  const int errnum = ran.error().code < 0 ? -ran.error().code : 0;
  const bool exec_failed = ran.error().message.rfind("exec ", 0) == 0;
  report(request.sink,
         SetupError{exec_failed ? "exec" : "sandbox_init", errnum, ran.error().message});
  _exit(exec_failed ? exec_failure_exit_code(errnum) : kExitSetupFailed);
}

}  // namespace

int run_sandboxed(const LaunchRequest& request) {
  if (!request.policy.tmpfs.empty())
    return (report(request.sink, setup_error("tmpfs", 0,
                                             "tmpfs mounts need Linux; on macOS the block's temp "
                                             "directory is a host directory (--tmpdir)")),
            kExitSetupFailed);
  LaunchRequest resolved = request;
  auto real_paths = seatbelt_resolve_paths(request.policy);
  if (!real_paths) {
    const Error& error = real_paths.error();  // its message says the errno's text already
    return (
        report(request.sink, SetupError{"bind", error.code < 0 ? -error.code : 0, error.message}),
        kExitSetupFailed);
  }
  resolved.policy = std::move(*real_paths);
  const std::string program = resolve_command(request.command.front(), request.policy);

  int kq = kqueue();
  if (kq < 0) return (report(request.sink, setup_error("kqueue", errno, "monitor")), 125);
  // Forwarded signals arrive as kqueue events; their default action must not end the monitor.
  for (int signum : kForwarded) {
    signal(signum, SIG_IGN);
    struct kevent change;
    EV_SET(&change, static_cast<uintptr_t>(signum), EVFILT_SIGNAL, EV_ADD, 0, 0, nullptr);
    kevent(kq, &change, 1, nullptr, 0, nullptr);
  }
  signal(SIGPIPE, SIG_IGN);
  int go[2];
  if (pipe(go) != 0) return (report(request.sink, setup_error("pipe", errno, "monitor")), 125);

  pid_t block = fork();
  if (block < 0) return (report(request.sink, setup_error("fork", errno, "the block")), 125);
  if (block == 0) {
    close(kq);
    close(go[1]);
    run_block(resolved, program, go[0]);
  }
  close(go[0]);
  // Only the block holds the error fd now: end of file tells the daemon it exec'd.
  if (request.sink.error_fd >= 0) close(request.sink.error_fd);

  Descendants tree(kq);
  tree.add(block);  // before the block may run: no fork of it goes unseen
  if (request.lifeline_fd >= 0) {
    struct kevent change;
    EV_SET(&change, static_cast<uintptr_t>(request.lifeline_fd), EVFILT_READ, EV_ADD, 0, 0,
           nullptr);
    kevent(kq, &change, 1, nullptr, 0, nullptr);
  }
  const char go_byte = 1;
  if (write(go[1], &go_byte, 1) != 1) {
    kill(block, SIGKILL);
  }
  close(go[1]);

  int status = 0;
  bool block_running = true;
  for (;;) {
    struct kevent events[64];
    struct timespec tick = {1, 0};  // the periodic rescan (seatbelt_descendants.h)
    int n = kevent(kq, nullptr, 0, events, 64, &tick);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) {
      tree.rescan();
      continue;
    }
    for (int i = 0; i < n; ++i) {
      const struct kevent& event = events[i];
      const pid_t pid = static_cast<pid_t>(event.ident);
      if (event.filter == EVFILT_SIGNAL) {
        if (block_running) kill(block, static_cast<int>(event.ident));
      } else if (event.filter == EVFILT_READ) {
        // The daemon's word (a byte) or its death (end of file): nothing of the block stays.
        tree.kill_all();
        if (block_running) waitpid(block, &status, 0);
        return 128 + SIGKILL;
      } else if (event.filter == EVFILT_PROC) {
        if (event.fflags & NOTE_FORK) tree.on_fork(pid);
        if (event.fflags & NOTE_EXIT) {
          tree.on_exit(pid);
          if (pid == block) {
            while (waitpid(block, &status, 0) < 0 && errno == EINTR) {
            }
            block_running = false;
          }
        }
      }
    }
    if (!block_running) break;
  }
  // The block's main process ended: as with the end of a pid namespace, whatever it left
  // behind goes too.
  tree.kill_all();
  if (block_running) {
    kill(block, SIGKILL);
    waitpid(block, &status, 0);
  }
  return exit_code_of(status);
}

}  // namespace stackie::seatbelt
