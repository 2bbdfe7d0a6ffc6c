// `stackied`: the per-user daemon (DESIGN.md §1, §7). The edge of the supervisor: it reads the
// command line and environment, opens the log, daemonises unless --foreground, wires the
// Daemon core to the IPC server, and is the only place that prints.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "base/posix_io.h"
#include "supervisor/daemon_loader.h"
#include "ipc/server.h"
#include "spawn/spawner.h"
#include "supervisor/block_logs.h"
#include "supervisor/daemon_core.h"
#include "supervisor/daemon_handlers.h"
#include "supervisor/host_ports.h"
#include "supervisor/service_manager.h"
#include "base/version.h"

namespace {

// Every forwarded connection costs the daemon two fds (DESIGN.md §6), so the default soft
// limit of 1024 would refuse the 500th concurrent one: take what the hard limit allows.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 1 << 16);
  setrlimit(RLIMIT_NOFILE, &limit);
}

constexpr char kUsage[] =
    "Usage: stackied [--foreground] [--help] [--version]\n"
    "\n"
    "The Stackie daemon: supervises every block of every stack the user has up.\n"
    "\n"
    "Options:\n"
    "  --foreground   stay in the foreground and log to stderr (for service managers, tests)\n"
    "  -h, --help     show this help\n"
    "  -V, --version  print version, commit and sandbox backend\n"
    "\n"
    "Environment: STACKIE_HOME (default ~/.stackie), XDG_RUNTIME_DIR, STACKIE_LOCKBOX;\n"
    "NOTIFY_SOCKET, LISTEN_FDS and LISTEN_PID from systemd (readiness, socket activation).\n"
    "See stackied(8).\n";

int log_fd = 2;
bool journal_style = false;  // stderr is the journal: sd-daemon "<N>" priority prefixes

void log_line(stackie::DaemonLogLevel level, const std::string& message) {
  std::string line;
  if (journal_style) {
    line = level == stackie::DaemonLogLevel::error     ? "<3>"
           : level == stackie::DaemonLogLevel::warning ? "<4>"
                                                       : "<6>";
  } else {
    using namespace std::chrono;
    auto now = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    line = stackie::format_timestamp(now) + " ";
    line += level == stackie::DaemonLogLevel::error     ? "error: "
            : level == stackie::DaemonLogLevel::warning ? "warning: "
                                                        : "";
  }
  line += message;
  line += '\n';
  (void)!::write(log_fd, line.data(), line.size());
}

std::string stackie_home() {
  if (const char* home = std::getenv("STACKIE_HOME"); home && *home) return home;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.stackie";
  return {};
}

std::string default_socket_path(const std::string& home) {
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run)
    return std::string(run) + "/stackie/stackied.sock";
  return home + "/run/stackied.sock";
}

// Background mode: fork twice (no controlling terminal, not a session leader), and let the
// first parent exit only once the daemon is ready or has failed, with its message, so that
// `stackie` starting a daemon learns the outcome.
int daemonize(int* ready_fd) {
  int fds[2];
  if (stackie::pipe_cloexec(fds) != 0) return -1;
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
    std::fputs(report.c_str(), stderr);
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

void report_ready(int* ready_fd, const std::string& message) {
  if (*ready_fd < 0) return;
  (void)!::write(*ready_fd, message.data(), message.size());
  ::close(*ready_fd);
  *ready_fd = -1;
}

int fail(int* ready_fd, const std::string& message) {
  log_line(stackie::DaemonLogLevel::error, message);
  report_ready(ready_fd, "stackied: " + message + "\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool foreground = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "-V" || arg == "--version") {
      std::printf("%s\n", stackie::version_line("stackied").c_str());
      return 0;
    }
    if (arg == "--foreground") {
      foreground = true;
      continue;
    }
    std::fprintf(stderr, "stackied: unknown option '%s'\n%s", argv[i], kUsage);
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error value, not a death

  // Socket activation: read before anything forks, and never passed on to a block.
  stackie::Environment activation_env;
  for (const char* name : {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"})
    if (const char* value = std::getenv(name)) activation_env[name] = value;
  auto activated = stackie::activated_sockets(activation_env, ::getpid());
  stackie::forget_activation_environment();
  if (!activated.ok()) {
    std::fprintf(stderr, "stackied: %s\n", activated.error().message.c_str());
    return 1;
  }
  if (activated->count > 1) {
    std::fprintf(stderr, "stackied: the service manager passed %d sockets; it serves one\n",
                 activated->count);
    return 1;
  }
  int activated_fd = -1;
  if (activated->count == 1) {
    activated_fd = stackie::kFirstActivatedFd;
    ::fcntl(activated_fd, F_SETFD, FD_CLOEXEC);  // passed to us, not to the blocks
  }

  std::string home = stackie_home();
  if (home.empty() || home[0] != '/') {
    std::fputs("stackied: set STACKIE_HOME (or HOME) to an absolute path\n", stderr);
    return 1;
  }
  ::mkdir(home.c_str(), 0700);

  int ready_fd = -1;
  if (!foreground) {
    std::string log_path = home + "/stackied.log";
    int fd =
        ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      std::fprintf(stderr, "stackied: open %s: %s\n", log_path.c_str(), std::strerror(errno));
      return 1;
    }
    if (daemonize(&ready_fd) != 0) {
      std::perror("stackied: fork");
      return 1;
    }
    ::dup2(fd, 2);
    ::close(fd);
  } else {
    journal_style = std::getenv("JOURNAL_STREAM") != nullptr;
  }
  log_fd = 2;

  uv_loop_t loop;
  raise_fd_limit();
  uv_loop_init(&loop);

  auto passthrough = stackie::make_passthrough_spawner();
  std::unique_ptr<stackie::Spawner> lockbox_spawner;
  std::string lockbox_path;
  if (auto found = stackie::find_lockbox(); found.ok()) {
    lockbox_path = *found;
    lockbox_spawner = stackie::make_lockbox_spawner(lockbox_path);
  } else {
    log_line(stackie::DaemonLogLevel::warning,
             found.error().message + ": sandboxed blocks will fail to start");
  }

  stackie::DaemonOptions options;
  options.home = home;
  stackie::Daemon* running = nullptr;  // set once open: the allocator asks what it holds
  options.loader = stackie::daemon_stack_loader(
      home, [&running](const stackie::HostPortRequest& request) {
        return stackie::allocate_host_port(
            request, running ? running->supervisor().ps() : std::vector<stackie::BlockStatus>{});
      });
  options.supervisor.loop = &loop;
  options.supervisor.passthrough = passthrough.get();
  options.supervisor.sandboxed = lockbox_spawner.get();
  options.supervisor.logs = stackie::daemon_log_settings(home);
  options.ephemeral_base = stackie::daemon_ephemeral_base(home);
  options.log = log_line;
  options.on_stopping = [] { stackie::notify_service_manager("STOPPING=1"); };
  int status = 0;
  {
    auto daemon = stackie::Daemon::open(options);
    if (!daemon.ok()) return fail(&ready_fd, daemon.error().message);
    running = daemon->get();

    using namespace std::chrono;
    uint64_t started = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    stackie::DaemonHandlers handlers(**daemon, lockbox_path, started);
    stackie::ipc::ServerOptions server_options;
    server_options.log = [](stackie::ipc::LogLevel level, std::string_view message) {
      log_line(level == stackie::ipc::LogLevel::warning ? stackie::DaemonLogLevel::warning
                                                        : stackie::DaemonLogLevel::info,
               std::string(message));
    };
    stackie::ipc::Server server(&loop, handlers, server_options);
    std::string socket = stackie::daemon_socket_path(home);
    if (socket.empty()) socket = default_socket_path(home);
    auto listening = activated_fd >= 0 ? server.listen_fd(activated_fd) : server.listen(socket);
    if (!listening.ok()) {
      status = fail(&ready_fd, listening.error().message);
    } else {
      log_line(stackie::DaemonLogLevel::info,
               activated_fd >= 0 ? "listening on the socket the service manager passed (fd " +
                                       std::to_string(activated_fd) + ")"
                                 : "listening on " + socket);
      (*daemon)->set_on_stopped([&server] { server.close(); });
      (*daemon)->restore();
      report_ready(&ready_fd, "ok");
      stackie::notify_service_manager("READY=1");
      uv_run(&loop, UV_RUN_DEFAULT);
    }
  }
  // Every handle is closed by now; let the close callbacks run, then the loop must close.
  uv_run(&loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&loop) != 0) {
    log_line(stackie::DaemonLogLevel::error, "the loop did not close cleanly");
    return 1;
  }
  log_line(stackie::DaemonLogLevel::info, "stopped");
  return status;
}
