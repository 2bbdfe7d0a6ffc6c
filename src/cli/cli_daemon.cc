#include "cli/cli_daemon.h"

#include <uv.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "cli/cli.h"
#include "cli/daemon_process.h"
#include "stack/settings.h"

namespace stackie::cli {

namespace {

constexpr const char kNotRunning[] =
    "stackie: the daemon is not running (start it with 'stackie daemon start' or run 'stackie "
    "up')\n";

}  // namespace

Result<std::string> daemon_socket_path() {
  Environment env = current_environment();
  STACKIE_TRY_ASSIGN(home, stackie_home(env));
  STACKIE_TRY_ASSIGN(settings, load_settings(config_path(home)));
  return socket_path(env, settings);
}

namespace {

// A daemon that was killed can keep its socket open while the kernel finishes it (a process
// closes its files only once a slow system call it was in returns), and connections queue on
// it that nobody answers: an `up` right after `kill -9` of the daemon got "the daemon closed the
// connection". connect() tells such a daemon apart (ipc::is_daemon_exiting); this waits until it
// is gone, after which it is simply not running.
constexpr auto kExitingDaemonWait = std::chrono::seconds(10);

Result<ipc::Client> connect_once_gone(const std::string& path, const ipc::ClientOptions& options) {
  auto client = ipc::Client::connect(path, options);
  const auto deadline = std::chrono::steady_clock::now() + kExitingDaemonWait;
  while (!client.ok() && ipc::is_daemon_exiting(client.error()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    client = ipc::Client::connect(path, options);
  }
  return client;
}

// One connection to the daemon's socket. With `start`, a daemon that is not running is started
// and waited for (up to 5 s); without, that is the one-line "not running" message.
Connection connect_to_daemon(const ipc::ClientOptions& options, bool start) {
  Connection out;
  auto path = daemon_socket_path();
  if (!path.ok()) {
    std::fprintf(stderr, "stackie: %s\n", path.error().message.c_str());
    out.exit_code = kExitFailed;
    return out;
  }
  auto client = connect_once_gone(*path, options);
  if (start && !client.ok() && ipc::is_daemon_not_running(client.error())) {
    // Two racing `up`s may both spawn: stackied is single-instance (its pid file lock), the
    // loser exits and both clients then reach the winner.
    auto started = spawn_daemon();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      client = connect_once_gone(*path, options);
      if (client.ok() || !ipc::is_daemon_not_running(client.error())) break;
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!client.ok() && !started.ok()) {
      std::fprintf(stderr, "stackie: %s\n", started.error().message.c_str());
      out.exit_code = kExitDaemonUnreachable;
      return out;
    }
  }
  if (!client.ok()) {
    if (start)
      std::fprintf(stderr, "stackie: the daemon did not come up on %s: %s\n", path->c_str(),
                   client.error().message.c_str());
    else if (ipc::is_daemon_not_running(client.error()))
      std::fputs(kNotRunning, stderr);
    else
      std::fprintf(stderr, "stackie: %s: %s\n", path->c_str(), client.error().message.c_str());
    out.exit_code = kExitDaemonUnreachable;
    return out;
  }
  out.client.emplace(std::move(*client));
  return out;
}

}  // namespace

Connection connect_daemon(ipc::ClientOptions options) {
  return connect_to_daemon(options, false);
}

Connection connect_or_start_daemon(ipc::ClientOptions options) {
  return connect_to_daemon(options, true);
}

int report_remote_error(const ipc::RemoteError& error) {
  std::fprintf(stderr, "stackie: %s\n", error.message.c_str());
  return error.code == "shutting_down" ? kExitDaemonUnreachable : kExitFailed;
}

// Every way of losing the daemon is exit 3 (stackie(1)): it closed the connection, or it
// does not answer or read within the client's deadline (stopped, wedged).
int report_transport_error(const Error& error) {
  if (error.code == UV_EOF) {
    std::fputs("stackie: the daemon closed the connection\n", stderr);
    return kExitDaemonUnreachable;
  }
  if (error.code == UV_ETIMEDOUT || error.code == UV_ECONNRESET || error.code == UV_EPIPE) {
    std::fprintf(stderr, "stackie: the daemon cannot be reached: %s\n", error.message.c_str());
    return kExitDaemonUnreachable;
  }
  std::fprintf(stderr, "stackie: %s\n", error.message.c_str());
  return kExitFailed;
}

int usage_error(std::string_view verb, std::string_view message) {
  std::fprintf(stderr, "stackie %.*s: %.*s\nsee 'stackie help %.*s'\n",
               static_cast<int>(verb.size()), verb.data(), static_cast<int>(message.size()),
               message.data(), static_cast<int>(verb.size()), verb.data());
  return kExitUsage;
}

}  // namespace stackie::cli
