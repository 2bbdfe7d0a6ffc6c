// `stackied`: the per-user daemon (DESIGN.md §1, §7). The edge of the supervisor: it reads the
// command line and environment, opens the log, daemonises unless --foreground, wires the
// Daemon core to the IPC server, and is the only place that prints.
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/api_routes.h"
#include "api/api_token.h"
#include "api/http_server.h"
#include "base/directories.h"
#ifdef __linux__
#include "base/sandbox_probe.h"
#endif
#include "base/version.h"
#include "ipc/client.h"
#include "ipc/server.h"
#include "spawn/passthrough_monitor.h"
#include "spawn/spawner.h"
#include "stack/paths.h"
#include "supervisor/block_logs.h"
#include "supervisor/daemon_core.h"
#include "supervisor/daemon_handlers.h"
#include "supervisor/daemon_loader.h"
#include "supervisor/daemon_process.h"
#include "supervisor/host_ports.h"
#include "supervisor/service_manager.h"

namespace {

constexpr char kUsage[] =
    "Usage: stackied [--foreground] [--api PORT] [--help] [--version]\n"
    "\n"
    "The Stackie daemon: supervises every block of every stack the user has up.\n"
    "\n"
    "Options:\n"
    "  --foreground   stay in the foreground and log to stderr (for service managers, tests)\n"
    "  --api PORT     serve the HTTP API on 127.0.0.1:PORT (stackie-api(7)); 0: off. Default:\n"
    "                 config.toml's api_port, else off\n"
    "  -h, --help     show this help\n"
    "  -V, --version  print version, commit and sandbox backend\n"
    "\n"
    "Environment: STACKIE_HOME (default ~/.stackie; Windows: %LOCALAPPDATA%\\stackie),\n"
    "XDG_RUNTIME_DIR, STACKIE_LOCKBOX;\n"
    "NOTIFY_SOCKET, LISTEN_FDS and LISTEN_PID from systemd (readiness, socket activation);\n"
    "on macOS, launchd's socket activation (the LaunchAgent's Sockets entry \"Listeners\").\n"
    "See stackied(8).\n";

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
  stackie::write_log(line);
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

// ---- the steps of main, in order ----------------------------------------------------------

// --help, --version and usage errors end the program here with `exit_status`.
struct CommandLine {
  bool foreground = false;
  std::optional<int> api_port;  // --api PORT: wins over config.toml's api_port
  std::string ready_handle;     // --ready-handle H: the Windows starter's channel (internal)
  std::vector<std::string> daemon_args;  // what a new daemon process is run with (Windows)
  std::optional<int> exit_status;
};

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine line;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      line.exit_status = 0;
    } else if (arg == "-V" || arg == "--version") {
      std::printf("%s\n", stackie::version_line("stackied").c_str());
      line.exit_status = 0;
    } else if (arg == "--foreground") {
      line.foreground = true;
      continue;
    } else if (arg == "--ready-handle" && i + 1 < argc) {
      line.ready_handle = argv[++i];
      continue;
    } else if (arg == "--api" && i + 1 < argc) {
      char* end = nullptr;
      long port = std::strtol(argv[++i], &end, 10);
      if (*end == '\0' && port >= 0 && port <= 65535) {
        line.api_port = static_cast<int>(port);
        line.daemon_args.insert(line.daemon_args.end(), {"--api", argv[i]});
        continue;
      }
      std::fprintf(stderr, "stackied: --api needs a port number 1..65535 (0: off), not '%s'\n",
                   argv[i]);
      line.exit_status = 2;
    } else {
      std::fprintf(stderr, "stackied: unknown option '%s'\n%s", argv[i], kUsage);
      line.exit_status = 2;
    }
    return line;
  }
  return line;
}

// $STACKIE_HOME, else ~/.stackie or %LOCALAPPDATA%/stackie (stack/paths.h), created 0700 when
// missing.
stackie::Result<std::string> daemon_home() {
  stackie::Environment env;
  for (const char* name : {"STACKIE_HOME", "HOME", "LOCALAPPDATA"})
    if (const char* value = std::getenv(name)) env[name] = value;
  STACKIE_TRY_ASSIGN(home, stackie::stackie_home(env));
  STACKIE_TRY(stackie::make_directories(home));
  return home;
}

// In the foreground the log is stderr (the journal's when JOURNAL_STREAM says so). Otherwise
// the log file is opened first, so that its failure still reaches the terminal, then the
// process daemonises with stderr on the log; `ready_fd` then reports the outcome to the parent.
stackie::Status start_logging(const CommandLine& line, const std::string& home, int* ready_fd) {
  if (line.foreground) {
    journal_style = std::getenv("JOURNAL_STREAM") != nullptr;
    return {};
  }
  return stackie::go_background(home, stackie::daemon_log_file(home), line.daemon_args, ready_fd);
}

// The passthrough spawner always; the lockbox spawner when stackie-lockbox is found (without
// it, sandboxed blocks fail to start with the reason, and the daemon still serves).
struct Spawners {
  std::unique_ptr<stackie::Spawner> passthrough;
  std::unique_ptr<stackie::Spawner> lockbox;
  std::string lockbox_path;
  bool landlock = false;  // the lockbox runs its landlock backend: ports are the host's
};

// The Linux backend, decided once for the daemon's life ([sandbox] backend in config.toml;
// auto = the namespace lockbox where this host allows it, probed now, else landlock).
bool choose_landlock(const std::string& home) {
#ifndef __linux__
  (void)home;
  return false;
#else
  std::string setting = stackie::daemon_sandbox_backend(home);
  if (setting == "namespaces") return false;
  if (setting == "landlock") {
    log_line(stackie::DaemonLogLevel::info, "sandbox backend: landlock (config.toml)");
    return true;
  }
  stackie::BackendChoice choice = stackie::choose_linux_backend();
  if (choice.backend == stackie::LinuxBackend::landlock)
    log_line(stackie::DaemonLogLevel::warning,
             "sandbox backend: landlock (Landlock ABI " + std::to_string(choice.landlock_abi) +
                 "), weaker than the namespace lockbox: " + choice.reason);
  return choice.backend == stackie::LinuxBackend::landlock;
#endif
}

Spawners make_spawners(const std::string& home) {
  Spawners spawners;
  // Passthrough blocks run behind a monitor that is this very program (see its header).
  char self[4096];
  size_t self_size = sizeof self;
  std::string monitor = uv_exepath(self, &self_size) == 0 ? std::string(self, self_size) : "";
  spawners.passthrough = stackie::make_passthrough_spawner(monitor);
  if (auto found = stackie::find_lockbox(); found.ok()) {
    spawners.lockbox_path = *found;
    // Block limits: a cgroup per block where the service manager delegated us a subtree
    // (Delegate=yes in the unit), rlimits otherwise (stackied(8) LIMITS).
    stackie::DelegatedCgroups cgroups = stackie::take_delegated_cgroups();
    spawners.landlock = choose_landlock(home);
    spawners.lockbox = stackie::make_lockbox_spawner(spawners.lockbox_path, std::move(cgroups.tree),
                                                     cgroups.none_because, spawners.landlock);
    log_line(stackie::DaemonLogLevel::info,
             "block limits: " + spawners.lockbox->limits_enforcement());
  } else {
    log_line(stackie::DaemonLogLevel::warning,
             found.error().message + ": sandboxed blocks will fail to start");
  }
  return spawners;
}

stackie::DaemonOptions daemon_options(const std::string& home, uv_loop_t* loop,
                                      const Spawners& spawners, stackie::Daemon** running) {
  stackie::DaemonOptions options;
  options.home = home;
  // The allocator asks the running daemon which host ports its blocks hold, and what each
  // stack's ports were given before.
  options.loader = stackie::daemon_stack_loader(
      home,
      [running](const stackie::HostPortRequest& request) {
        return stackie::choose_host_port(
            request, *running ? (*running)->supervisor().ps() : std::vector<stackie::BlockStatus>{},
            *running ? &(*running)->port_memory() : nullptr);
      },
      spawners.landlock);
  options.supervisor.loop = loop;
  options.supervisor.passthrough = spawners.passthrough.get();
  options.supervisor.sandboxed = spawners.lockbox.get();
  options.supervisor.logs = stackie::daemon_log_settings(home);
#if !defined(_WIN32)
  // Where a rotated-out log file's pages are freed: off the loop (log_files.h). Not on Windows,
  // where a file held open cannot be renamed over.
  options.supervisor.logs.release_rotated_out = [loop](stackie::UniqueFd fd) {
    stackie::close_on_thread_pool(loop, std::move(fd));
  };
#endif
  options.ephemeral_base = stackie::daemon_ephemeral_base(home);
  options.log = log_line;
  options.on_stopping = [] { stackie::notify_service_manager("STOPPING=1"); };
  return options;
}

// Whether a daemon answers on the socket of `home`: one that holds the lock without answering
// is on its way out.
bool a_daemon_answers(const std::string& home) {
  auto socket = stackie::daemon_socket_path(home);
  if (!socket.ok()) return true;  // no socket to wait for: nothing will change
  auto client = stackie::ipc::Client::connect(*socket);
  return client.ok() || !(stackie::ipc::is_daemon_not_running(client.error()) ||
                          stackie::ipc::is_daemon_exiting(client.error()));
}

// Daemon::open, waiting for a daemon that is stopping. Told to stop, a daemon closes its socket
// first and lets go of the single-instance lock only once its loop has ended (slower under the
// sanitizers), so `daemon stop` then `up` could find the lock taken and nobody serving. A
// holder that answers on the socket is another daemon: given way to at once.
stackie::Result<std::unique_ptr<stackie::Daemon>> open_daemon(const std::string& home,
                                                              uv_loop_t* loop,
                                                              const Spawners& spawners,
                                                              stackie::Daemon** running) {
  constexpr auto kStoppingDaemonWait = std::chrono::seconds(10);
  const auto deadline = std::chrono::steady_clock::now() + kStoppingDaemonWait;
  for (;;) {
    auto daemon = stackie::Daemon::open(daemon_options(home, loop, spawners, running));
    if (daemon.ok() || daemon.error().code != UV_EBUSY) return daemon;
    if (std::chrono::steady_clock::now() > deadline || a_daemon_answers(home)) return daemon;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Opens the daemon and its socket, restores the stacks of the state file, reports ready and
// runs the loop until every stack is down. Returns the exit status.
int serve(uv_loop_t* loop, const Spawners& spawners, const std::string& home, int activated_fd,
          int* ready_fd, std::optional<int> api_port) {
  stackie::Daemon* running = nullptr;  // set once open
  auto daemon = open_daemon(home, loop, spawners, &running);
  if (!daemon.ok()) return fail(ready_fd, daemon.error().message);
  running = daemon->get();

  using namespace std::chrono;
  uint64_t started = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  stackie::DaemonHandlers handlers(**daemon, spawners.lockbox_path, started);
  stackie::ipc::ServerOptions server_options;
  server_options.log = [](stackie::ipc::LogLevel level, std::string_view message) {
    log_line(level == stackie::ipc::LogLevel::warning ? stackie::DaemonLogLevel::warning
                                                      : stackie::DaemonLogLevel::info,
             std::string(message));
  };
  stackie::ipc::Server server(loop, handlers, server_options);
  std::string where;
  stackie::Status listening;
  if (activated_fd >= 0) {
    where = "the socket the service manager passed (fd " + std::to_string(activated_fd) + ")";
    listening = server.listen_fd(activated_fd);
  } else {
    auto socket = stackie::daemon_socket_path(home);
    if (!socket.ok()) return fail(ready_fd, socket.error().message);
    where = *socket;
    listening = server.listen(*socket);
  }
  if (!listening.ok()) return fail(ready_fd, listening.error().message);
  log_line(stackie::DaemonLogLevel::info, "listening on " + where);
  // The HTTP API (off by default): the same handlers behind a token, on 127.0.0.1 only.
  std::unique_ptr<stackie::api::HttpServer> api;
  if (!api_port) {
    auto configured = stackie::daemon_api_port(home);
    if (!configured.ok())
      log_line(stackie::DaemonLogLevel::warning,
               "the HTTP API stays off: " + configured.error().message);
    api_port = configured.ok() ? *configured : 0;
  }
  if (*api_port != 0) {
    auto token = stackie::api::load_or_create_token(home);
    if (!token.ok()) return fail(ready_fd, token.error().message);
    api = std::make_unique<stackie::api::HttpServer>(
        loop, stackie::api::make_router(handlers, *token, {std::string(stackie::version())}),
        [](const std::string& message) { log_line(stackie::DaemonLogLevel::warning, message); });
    if (auto listening_api = api->listen(*api_port); !listening_api.ok())
      return fail(ready_fd, listening_api.error().message);
    log_line(stackie::DaemonLogLevel::info, "HTTP API on 127.0.0.1:" + std::to_string(*api_port) +
                                                " (token in " + stackie::api::token_path(home) +
                                                ")");
  }
  (*daemon)->set_on_stopped([&server, &api] {
    server.close();
    if (api) api->close();
  });
  (*daemon)->restore();
  report_ready(ready_fd, "ok");
  stackie::notify_service_manager("READY=1");
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], stackie::kPassthroughMonitorFlag) == 0)
    return stackie::run_passthrough_monitor(argc, argv);
  const CommandLine command_line = parse_command_line(argc, argv);
  if (command_line.exit_status) return *command_line.exit_status;
  stackie::prepare_process();

  int ready_fd = -1;  // background mode: where the waiting starter learns the outcome
  if (!command_line.ready_handle.empty()) {
    auto adopted = stackie::adopt_ready_channel(command_line.ready_handle);
    if (!adopted.ok()) {
      std::fprintf(stderr, "stackied: %s\n", adopted.error().message.c_str());
      return 2;
    }
    ready_fd = *adopted;
  }
  auto activated_fd = stackie::take_activated_socket();
  if (!activated_fd.ok()) {
    std::fprintf(stderr, "stackied: %s\n", activated_fd.error().message.c_str());
    return 1;
  }
  auto home = daemon_home();
  if (!home.ok()) {
    std::fprintf(stderr, "stackied: %s\n", home.error().message.c_str());
    return 1;
  }
  if (auto logging = start_logging(command_line, *home, &ready_fd); !logging.ok()) {
    std::fprintf(stderr, "stackied: %s\n", logging.error().message.c_str());
    return 1;
  }

  uv_loop_t loop;
  uv_loop_init(&loop);
  const Spawners spawners = make_spawners(*home);  // outlive the loop: processes refer to them
  const int status = serve(&loop, spawners, *home, *activated_fd, &ready_fd, command_line.api_port);
  // Every handle is closed by now; let the close callbacks run, then the loop must close.
  uv_run(&loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&loop) != 0) {
    log_line(stackie::DaemonLogLevel::error, "the loop did not close cleanly");
    return 1;
  }
  log_line(stackie::DaemonLogLevel::info, "stopped");
  return status;
}
