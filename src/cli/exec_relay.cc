#include "cli/exec_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/exec_stdio.h"

namespace stackie::cli {
namespace {

// Signals that reach us are handled in the loop: written to a pipe by the handler.
int g_signal_pipe[2] = {-1, -1};
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void on_signal(int sig) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t done = write(fd, data, n);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, -1);
      continue;
    }
    if (done <= 0) return false;
    data += done;
    n -= static_cast<size_t>(done);
  }
  return true;
}

// In the child, between fork and execve: async-signal-safe calls only.
[[noreturn]] void exec_child(ExecStdio& w, char** argv, char** envp, int report_fd) {
  setpgid(0, 0);  // the caller's terminal signals reach us only, and we forward them once
  // Our handlers write to our signal pipe: not from here.
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  for (int sig : {SIGWINCH, SIGCHLD, SIGPIPE}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int fds[3];
  // Above 2 first, so that dup2 below never overwrites one still to be placed.
  for (int i = 0; i < 3; ++i) fds[i] = fcntl(w.child[i].get(), F_DUPFD_CLOEXEC, 3);
  bool placed = true;
  for (int i = 0; i < 3 && placed; ++i) placed = fds[i] >= 0 && dup2(fds[i], i) == i;
#ifdef CLOSE_RANGE_CLOEXEC
  // Whatever the caller's shell left open stays out (the report pipe lives until execve).
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
  // Not the caller's working directory: the lockbox moves into the block's anyway.
  if (placed && chdir("/") == 0) execve(argv[0], argv, envp);
  int err = errno;
  ssize_t ignored = write(report_fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

class SignalSetup {
 public:
  SignalSetup(const SignalSetup&) = delete;
  SignalSetup& operator=(const SignalSetup&) = delete;
  SignalSetup() = default;
  Status install() {
    auto pipe = make_pipe();
    if (!pipe.ok()) return pipe.take_error();
    read_ = std::move(pipe->first);
    write_ = std::move(pipe->second);
    set_flag(read_.get(), 0, O_NONBLOCK);
    set_flag(write_.get(), 0, O_NONBLOCK);
    g_signal_pipe[0] = read_.get();
    g_signal_pipe[1] = write_.get();
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int sig : kForwarded) sigaction(sig, &action, &saved_[sig]);
    sigaction(SIGWINCH, &action, &saved_[SIGWINCH]);
    sigaction(SIGCHLD, &action, &saved_[SIGCHLD]);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &saved_[SIGPIPE]);
    installed_ = true;
    return {};
  }
  ~SignalSetup() {
    if (!installed_) return;
    for (int sig : kForwarded) sigaction(sig, &saved_[sig], nullptr);
    for (int sig : {SIGWINCH, SIGCHLD, SIGPIPE}) sigaction(sig, &saved_[sig], nullptr);
    g_signal_pipe[0] = g_signal_pipe[1] = -1;
  }
  int fd() const { return read_.get(); }

 private:
  Fd read_, write_;
  struct sigaction saved_[NSIG] = {};
  bool installed_ = false;
};

// Moves bytes until the child has exited and its output is drained.
class Relay {
 public:
  Relay(ExecStdio& w, pid_t child, int signals) : w_(w), child_(child), signals_(signals) {}

  int run() {
    for (;;) {
      std::vector<pollfd> fds;
      fds.push_back({signals_, POLLIN, 0});
      if (stdin_open_ && pending_.empty() && w_.to_child.open()) fds.push_back({0, POLLIN, 0});
      if (!pending_.empty()) fds.push_back({w_.to_child.get(), POLLOUT, 0});
      for (Fd* source : {&w_.from_pty, &w_.from_out, &w_.from_err})
        if (source->open()) fds.push_back({source->get(), POLLIN, 0});
      // Once the child is gone, what its descendants still write is not waited for: one
      // last pass takes what is there (a non-blocking read of the master waits for the
      // kernel's pending pty buffer work), then the master closes and the pty hangs up.
      bool last_pass = status_.has_value();
      int ready = poll(fds.data(), fds.size(), last_pass ? 0 : -1);
      if (ready < 0 && errno != EINTR) break;
      if (last_pass) {
        drain_all();
        break;
      }
      for (const pollfd& p : fds) {
        if (p.revents == 0) continue;
        if (p.fd == signals_)
          take_signals();
        else if (p.fd == 0)
          read_stdin();
        else if ((p.events & POLLOUT) != 0)
          flush_to_child();
        else
          pump(p.fd);
      }
    }
    w_.to_child.reset();
    w_.from_pty.reset();
    if (!status_) {
      int status = 0;
      while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
      }
      status_ = status;
    }
    return exit_status(*status_);
  }

 private:
  void take_signals() {
    unsigned char sig;
    while (read(signals_, &sig, 1) == 1) {
      if (sig == SIGCHLD) {
        int status;
        if (waitpid(child_, &status, WNOHANG) == child_) status_ = status;
      } else if (sig == SIGWINCH) {
        winsize size;
        if (w_.pty && ioctl(0, TIOCGWINSZ, &size) == 0) ioctl(w_.to_child.get(), TIOCSWINSZ, &size);
      } else if (!status_) {
        kill(child_, sig);
      }
    }
  }
  void read_stdin() {
    char buffer[16384];
    ssize_t n = read(0, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      stdin_open_ = false;
      // End of input: CMD's stdin pipe closes. A pty has no such thing; the terminal went.
      if (!w_.pty) w_.to_child.reset();
      return;
    }
    pending_.assign(buffer, static_cast<size_t>(n));
    flush_to_child();
  }
  void flush_to_child() {
    while (!pending_.empty()) {
      ssize_t n = write(w_.to_child.get(), pending_.data(), pending_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;  // poll for POLLOUT
      if (n < 0) {  // CMD closed its stdin (EPIPE) or the pty hung up: input has nowhere to go
        pending_.clear();
        stdin_open_ = false;
        if (!w_.pty) w_.to_child.reset();
        return;
      }
      pending_.erase(0, static_cast<size_t>(n));
    }
  }
  // One read from an output source to the caller's matching fd.
  void pump(int fd) {
    Fd* source = fd == w_.from_pty.get()   ? &w_.from_pty
                 : fd == w_.from_out.get() ? &w_.from_out
                                           : &w_.from_err;
    int to = source == &w_.from_pty ? w_.pty_echo_to : source == &w_.from_out ? 1 : 2;
    char buffer[65536];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {  // EOF, or EIO from a master whose slave every holder closed
      source->reset();
      return;
    }
    // Our reader is gone (`stackie exec b -- yes | head -1`): so is CMD's, which then gets
    // EPIPE or SIGPIPE as it would have written to the caller's pipe itself.
    if (!write_all(to, buffer, static_cast<size_t>(n))) source->reset();
  }
  // Non-blocking reads until each source would block or ends. A non-blocking read of a pty
  // master first waits for the kernel's pending buffer work, so CMD's last words are there.
  // Bounded: what CMD left behind (`sh -c 'yes &'`) may write faster than we read, and its
  // output after CMD's end is not ours to relay. A pipe or pty buffer holds far less.
  void drain_all() {
    constexpr size_t kMostLeftOver = 4 << 20;
    for (Fd* source : {&w_.from_pty, &w_.from_out, &w_.from_err}) {
      if (!source->open()) continue;
      set_flag(source->get(), 0, O_NONBLOCK);
      int to = source == &w_.from_pty ? w_.pty_echo_to : source == &w_.from_out ? 1 : 2;
      char buffer[65536];
      for (size_t drained = 0; drained < kMostLeftOver;) {
        ssize_t n = read(source->get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || !write_all(to, buffer, static_cast<size_t>(n))) break;
        drained += static_cast<size_t>(n);
      }
    }
  }

  ExecStdio& w_;
  pid_t child_;
  int signals_;
  bool stdin_open_ = true;
  std::string pending_;
  std::optional<int> status_;
};

}  // namespace

Result<int> run_relayed(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  SignalSetup signals;
  if (auto installed = signals.install(); !installed.ok()) return installed.error();
  bool pty = isatty(0);
  auto wiring = pty ? stdio_on_pty() : stdio_on_pipes();
  if (!wiring.ok()) return wiring.take_error();
  auto report = make_pipe();
  if (!report.ok()) return report.take_error();

  ExecVectors exec_vectors(argv, env);

  RawMode raw;
  if (pty && !raw.enter(0)) return system_error(errno, "set the terminal to raw mode");
  pid_t child = fork();
  if (child == 0)
    exec_child(*wiring, exec_vectors.argv(), exec_vectors.envp(), report->second.get());
  if (child < 0) return system_error(errno, "fork");
  // Only the child holds CMD's ends now: EOF and EIO on ours mean CMD (and all it started)
  // closed them.
  for (Fd& fd : wiring->child) fd.reset();
  report->second.reset();
  int exec_errno = 0;
  if (read(report->first.get(), &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    waitpid(child, nullptr, 0);
    return system_error(exec_errno, "exec " + argv[0]);
  }
  return Relay(*wiring, child, signals.fd()).run();
}

}  // namespace stackie::cli
