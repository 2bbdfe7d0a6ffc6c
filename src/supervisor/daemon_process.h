// What running stackied as a process means on each OS (daemon_process_posix.cc,
// daemon_process_windows.cc): the process-wide settings, what a service manager handed over,
// and how a background daemon leaves its starter and tells it the outcome. stackied_main.cc,
// the same on every OS, calls these in order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace stackie {

// Before anything else: the fd limit raised (every forwarded connection costs two fds), a
// client gone mid-write made an error value (SIGPIPE ignored). Nothing to do on Windows.
void prepare_process();

// Socket activation: the listening socket a service manager passed (systemd's LISTEN_FDS,
// launchd's Sockets entry), or -1: listen as usual. Windows has none: always -1.
Result<int> take_activated_socket();

// Writes `line` (one whole line) to stderr: the terminal, the journal, or the log file.
void write_log(std::string_view line);

// Background mode: the daemon leaves the starter (`stackie daemon start`, `stackie up`) and
// logs to `log_path` (opened first, so that its failure still reaches the terminal); `args` are
// the daemon's own options, for an OS where the daemon is a new process (Windows). Returns
// in the daemon, with `*ready_fd` the channel on which report_ready() tells the waiting
// starter "ok" or the error; the starter exits with that outcome and never returns from here.
// POSIX: two forks, a new session, stderr on the log. Windows: the starter runs a detached
// `stackied --foreground --ready-handle H` with stderr on the log, out of any job it is in.
Status go_background(const std::string& home, const std::string& log_path,
                     const std::vector<std::string>& args, int* ready_fd);

// The starter's end of the ready channel, named on the command line (`--ready-handle H`,
// Windows only: there the child is a new program, not a fork). An error elsewhere.
Result<int> adopt_ready_channel(std::string_view value);

}  // namespace stackie
