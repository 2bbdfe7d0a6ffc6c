#include "cli/mcp_exec_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "cli/exec_stdio.h"

extern char** environ;

namespace stackie::cli::mcp {

namespace {

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(int out, int err, char** argv, char** envp, const char* cwd,
                             bool search_path, int report_fd) {
  setpgid(0, 0);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int fds[3] = {fcntl(null_fd, F_DUPFD_CLOEXEC, 3), fcntl(out, F_DUPFD_CLOEXEC, 3),
                fcntl(err, F_DUPFD_CLOEXEC, 3)};
  bool placed = null_fd >= 0;
  for (int i = 0; i < 3 && placed; ++i) placed = fds[i] >= 0 && dup2(fds[i], i) == i;
#ifdef CLOSE_RANGE_CLOEXEC
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
  if (placed && chdir(cwd) == 0) {
    if (search_path) {
      environ = envp;
      execvp(argv[0], argv);
    } else {
      execve(argv[0], argv, envp);
    }
  }
  int error = errno;
  ssize_t ignored = write(report_fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

void take(int fd, CapturedStream& stream, std::size_t cap, bool& still_open) {
  char buffer[65536];
  ssize_t n = read(fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    still_open = false;
    return;
  }
  stream.bytes += static_cast<uint64_t>(n);
  if (stream.kept.size() < cap)
    stream.kept.append(buffer, std::min(static_cast<std::size_t>(n), cap - stream.kept.size()));
}

}  // namespace

Result<CapturedRun> run_captured(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env, const std::string& cwd,
                                 bool search_path, std::chrono::milliseconds timeout,
                                 std::size_t cap) {
  if (argv.empty()) return Error{0, "no command"};
  auto out = make_pipe();
  if (!out.ok()) return out.take_error();
  auto err = make_pipe();
  if (!err.ok()) return err.take_error();
  auto report = make_pipe();
  if (!report.ok()) return report.take_error();
  ExecVectors exec_vectors(argv, env);
  std::string directory = cwd.empty() ? "/" : cwd;

  pid_t child = fork();
  if (child == 0)
    exec_child(out->second.get(), err->second.get(), exec_vectors.argv(), exec_vectors.envp(),
               directory.c_str(), search_path, report->second.get());
  if (child < 0) return system_error(errno, "fork");
  setpgid(child, child);  // as the child does: a timeout may come before it ran that far
  out->second.reset();
  err->second.reset();
  report->second.reset();
  int exec_errno = 0;
  if (read(report->first.get(), &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return system_error(exec_errno, "cannot run " + argv[0]);
  }

  CapturedRun run;
  bool out_open = true, err_open = true;
  std::optional<int> status;
  auto start = std::chrono::steady_clock::now();
  auto killed_at = std::chrono::steady_clock::time_point::max();
  auto exited_at = std::chrono::steady_clock::time_point::max();
  // Until the command has exited and its pipes are closed, or, once it has exited, until what
  // it left behind (a daemonised child holding the pipes) stops writing at once.
  for (;;) {
    if (!status) {
      int s = 0;
      if (waitpid(child, &s, WNOHANG) == child) {
        status = s;
        exited_at = std::chrono::steady_clock::now();
      }
    }
    if (status && !out_open && !err_open) break;
    auto now = std::chrono::steady_clock::now();
    if (!run.timed_out && now - start >= timeout) {
      run.timed_out = true;
      kill(-child, SIGTERM);
      killed_at = now;
    }
    if (run.timed_out && now - killed_at >= std::chrono::seconds(2)) kill(-child, SIGKILL);
    pollfd fds[2];
    nfds_t count = 0;
    if (out_open) fds[count++] = {out->first.get(), POLLIN, 0};
    if (err_open) fds[count++] = {err->first.get(), POLLIN, 0};
    int ready = poll(fds, count, 50);
    // Exited, and nothing more is coming right now, or its leftovers keep writing: what they
    // write after the command's end is not its output.
    if (status &&
        (ready == 0 || std::chrono::steady_clock::now() - exited_at > std::chrono::seconds(1)))
      break;
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == out->first.get())
        take(fds[i].fd, run.out, cap, out_open);
      else
        take(fds[i].fd, run.err, cap, err_open);
    }
  }
  if (WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
  if (WIFSIGNALED(*status)) run.signal = WTERMSIG(*status);
  return run;
}

}  // namespace stackie::cli::mcp
