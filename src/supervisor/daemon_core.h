// The daemon around the supervisor (DESIGN.md §7): one instance per user (an flock on
// $STACKIE_HOME/stackied.lock, not just a pid file), the pid file, the state file and the
// restore of the stacks it lists, SIGTERM/SIGINT = stop every stack gracefully then finish.
// The IPC handlers and the main sit on top; this layer never prints: it reports through `log`.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/uv_handle.h"
#include "stack/paths.h"
#include "stack/stack_model.h"
#include "supervisor/heap_trim.h"
#include "supervisor/port_memory.h"
#include "supervisor/stack_neighbours.h"
#include "supervisor/state_file.h"
#include "supervisor/supervisor.h"

namespace stackie {

enum class DaemonLogLevel { error, warning, info };

// The blocks of a stack that is up, by the stack's name (none when it is not up): an `up` of
// part of a stack leaves them in it (LoadOptions::running_blocks).
using RunningBlocks = std::function<std::vector<std::string>(const std::string& stack)>;
// Loads and resolves the stack an `up` names (the loader's load_stack in the real daemon).
using StackLoader = std::function<Result<ResolvedStack>(const UpRequest&, const RunningBlocks&)>;

struct DaemonOptions {
  std::string home;  // $STACKIE_HOME, created 0700 when missing
  StackLoader loader;
  // Where the loader puts --ephemeral storage (daemon_loader.h daemon_ephemeral_base); a stack's
  // storage right below it is removed when the stack goes down.
  std::string ephemeral_base;
  SupervisorConfig supervisor;  // loop, spawners, tuning
  std::function<void(DaemonLogLevel, const std::string&)> log;
  bool handle_signals = true;         // SIGTERM and SIGINT stop the daemon
  std::function<void()> on_stopping;  // a graceful stop begins (stackied: STOPPING=1)
};

class Daemon {
 public:
  // Takes the single-instance lock (fails when another stackied holds it), writes the pid file.
  static Result<std::unique_ptr<Daemon>> open(DaemonOptions options);
  ~Daemon();  // removes the pid file, releases the lock; blocks still running are killed
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Brings back the stacks of the state file (blocks do not survive a daemon; volumes do).
  // Each comes up in the background; failures are logged and the stack stays recorded.
  void restore();

  // `up`: load, record in the state file, bring up (or re-apply). A file that does not load
  // (or a daemon that is stopping) is an immediate error and `done` is not called; otherwise
  // the stack's name, and `done` follows when it is up or failed.
  Result<std::string> up(UpRequest request, Supervisor::Progress progress, Supervisor::Done done);
  // `down`: stop and forget the stack.
  void down(const std::string& stack, Supervisor::Done done);
  // `down BLOCK...`: stop those blocks and every block that depends on them, and leave them
  // out of the stack (and of its record: a restore does not bring them back). `stopped` says
  // which went; all of them is a `down` of the stack.
  void down_blocks(const std::string& stack, const std::vector<std::string>& blocks,
                   std::function<void(Status, std::vector<std::string> stopped)> done);
  // Graceful stop (SIGTERM, `daemon.stop`): every stack down, the state file kept so that the
  // next daemon restores them; `on_stopped` runs then.
  void stop();
  bool stopping() const { return stopping_; }
  void set_on_stopped(std::function<void()> on_stopped) { on_stopped_ = std::move(on_stopped); }

  Supervisor& supervisor() { return *supervisor_; }
  const PortMemory& port_memory() const { return port_memory_; }
  const std::string& home() const { return options_.home; }
  std::string pid_path() const { return pid_file(options_.home); }
  std::string state_path() const { return state_file(options_.home); }
  const std::vector<StackRecord>& records() const { return records_; }

 private:
  explicit Daemon(DaemonOptions options);
  void log(DaemonLogLevel level, const std::string& message) const;
  Status check_identity(const std::string& name, const UpRequest& request) const;
  // Tells neighbours_ the blocks of the stack of `file` all stopped (logged if not written).
  void note_writers_stopped(const std::string& file);
  // `accepted_unsandboxed`: for a restore, the blocks its record allows without a sandbox (a
  // load that unsandboxes any other is refused); null for an interactive `up`.
  Result<std::string> up_checked(UpRequest request,
                                 const std::vector<std::string>* accepted_unsandboxed,
                                 Supervisor::Progress progress, Supervisor::Done done);
  // Each returns the state file's write error: the caller's answer must carry it (a stack
  // that was not recorded would not come back after a restart; one not forgotten would).
  Status remember(const std::string& name, const UpRequest& request,
                  const std::vector<std::string>& unsandboxed);
  Status forget(const std::string& name);
  Status save();
  void finish_stop();

  DaemonOptions options_;
  int lock_fd_ = -1;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<HeapTrimmer> heap_trimmer_;  // after supervisor_: it uses its event bus
  std::vector<StackRecord> records_;
  PortMemory port_memory_;
  StackNeighbours neighbours_;
  std::vector<UvHandle<uv_signal_t>> signals_;
  bool stopping_ = false;
  std::function<void()> on_stopped_;
};

// Where a second daemon finds the first: the pid in the pid file, 0 when unreadable.
int read_pid_file(const std::string& path);

}  // namespace stackie
