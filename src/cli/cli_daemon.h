// The CLI's way to its daemon: where the socket is, connecting (exit 3 when nobody serves it),
// autostarting stackied for `up` and `daemon start`, and turning replies into exit codes.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"
#include "ipc/client.h"
#include "stack/paths.h"

namespace stackie::cli {

Environment current_environment();

// The socket path from $STACKIE_HOME/config.toml and the environment (paths.h).
Result<std::string> daemon_socket_path();

// Connects, or prints the one "daemon is not running" line (or the transport error) to stderr
// and returns the exit code to use (3 or 1) in `exit_code`.
struct Connection {
  std::optional<ipc::Client> client;
  int exit_code = 0;
};
Connection connect_daemon(ipc::ClientOptions options = {});

// Like connect_daemon, but starts stackied first when nothing answers (bounded, ~5 s).
Connection connect_or_start_daemon(ipc::ClientOptions options = {});

// Prints a remote error as one line and maps it to an exit code (1, or 3 for shutting_down).
int report_remote_error(const ipc::RemoteError& error);
// Prints a transport error from call() and returns 1 (3 when the daemon hung up).
int report_transport_error(const Error& error);

// "stackie: VERB: MESSAGE\nsee 'stackie help VERB'" on stderr; returns 2.
int usage_error(std::string_view verb, std::string_view message);

bool stdout_is_tty();

}  // namespace stackie::cli
