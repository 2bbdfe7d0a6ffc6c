// supervisor/daemon_process.h on Linux and macOS.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>

#include "base/posix_io.h"
#include "stack/paths.h"
#include "supervisor/daemon_process.h"
#include "supervisor/launchd_activation.h"
#include "supervisor/service_manager.h"

namespace stackie {

namespace {

// Every forwarded connection costs the daemon two fds (DESIGN.md §6), so the default soft
// limit of 1024 would refuse the 500th concurrent one: take what the hard limit allows.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 1 << 16);
  setrlimit(RLIMIT_NOFILE, &limit);
}

// Fork twice (no controlling terminal, not a session leader), and let the first parent exit
// only once the daemon is ready or has failed, with its message, so that `stackie` starting a
// daemon learns the outcome.
int daemonize(int* ready_fd) {
  int fds[2];
  if (pipe_cloexec(fds) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid > 0) {
    ::close(fds[1]);
    std::string report;
    char buf[512];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) report.append(buf, size_t(n));
    if (report == "ok") std::_Exit(0);
    if (report.empty()) report = "stackied: the daemon died while starting\n";
    (void)!::write(2, report.data(), report.size());
    std::_Exit(1);
  }
  ::close(fds[0]);
  ::setsid();
  if (::fork() != 0) std::_Exit(0);
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ::dup2(null, 0);
  ::dup2(null, 1);
  *ready_fd = fds[1];
  return 0;
}

}  // namespace

void prepare_process() {
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error value, not a death
  raise_fd_limit();
}

// Read before anything forks, and never passed on to a block.
Result<int> take_activated_socket() {
  Environment activation_env;
  for (const char* name : {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"})
    if (const char* value = std::getenv(name)) activation_env[name] = value;
  auto activated = activated_sockets(activation_env, ::getpid());
  forget_activation_environment();
  if (!activated.ok()) return activated.take_error();
  if (activated->count > 1)
    return Error{0, "the service manager passed " + std::to_string(activated->count) +
                        " sockets; it serves one"};
  if (activated->count == 0) return take_launchd_socket();
  ::fcntl(kFirstActivatedFd, F_SETFD, FD_CLOEXEC);  // passed to us, not to the blocks
  return kFirstActivatedFd;
}

void write_log(std::string_view line) {
  (void)!::write(2, line.data(), line.size());
}

Status go_background(const std::string&, const std::string& log_path,
                     const std::vector<std::string>&, int* ready_fd) {
  int fd = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return system_error(errno, "open " + log_path);
  if (daemonize(ready_fd) != 0) {
    int saved = errno;
    ::close(fd);
    return system_error(saved, "fork");
  }
  ::dup2(fd, 2);
  ::close(fd);
  return {};
}

Result<int> adopt_ready_channel(std::string_view) {
  return Error{0, "--ready-handle is for the Windows daemon's own starter"};
}

}  // namespace stackie
