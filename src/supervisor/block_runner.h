// One block of a running stack: its processes over time (init, command, restarts), its pipes,
// health checks and timers, driven by the state table in block_state.h. Everything runs on
// the daemon's loop; nothing here blocks.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/uv_handle.h"
#include "spawn/spawner.h"
#include "stack/stack_model.h"
#include "supervisor/block_logs.h"
#include "supervisor/block_state.h"
#include "supervisor/egress_proxy.h"
#include "supervisor/health_probe.h"
#include "supervisor/port_forward.h"
#include "supervisor/restart_policy.h"

namespace stackie {

class OutputPipe;

struct BlockEnvironment {
  uv_loop_t* loop = nullptr;
  Spawner* spawner = nullptr;  // chosen for this block (sandboxed or passthrough)
  RestartTuning restart;
  PortAddress port_address;         // how to reach the block's ports
  std::function<void()> on_change;  // after every state change
  // Where a connection to one of the block's `consumes` goes (the provider, found by the
  // stack); asked per connection accepted inside the block's network namespace.
  std::function<Result<Upstream>(const ConsumedPort&)> consume_upstream;
  // A lifecycle event of this block (event_bus.h: the stack adds the names); may be empty.
  std::function<void(std::string action, Json details)> on_event;
  // SupervisorConfig::confine_policy, for a sandboxed block.
  std::function<void(SandboxPolicy&)> confine_policy;
};

// What `stackie status` shows of a block's past: its last exit and its last health check.
struct ExitRecord {
  int64_t code = 0;         // exit status (the lockbox's 128+N is reported as signal N)
  int signal = 0;           // nonzero when it died of a signal
  uint64_t at_ms = 0;       // wall clock, Unix ms
  std::string description;  // "exit status 1", "killed by SIGKILL", a setup error
};
struct HealthRecord {
  bool ok = false;
  uint64_t at_ms = 0;  // wall clock, Unix ms
  std::string message;
};

class BlockRunner {
 public:
  BlockRunner(BlockEnvironment env, ResolvedBlock spec, std::shared_ptr<BlockLogs> logs);
  ~BlockRunner();  // kills whatever still runs; handles close on the loop; emits `destroy`
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  // start() while stopping is not dropped: the block starts once the stop is over (a later
  // stop() cancels that).
  void start();
  void stop();
  // Sends `signum` to the block (SIGKILL: to every process of its sandbox); an error when it
  // has no process. The death that follows goes to the restart policy like any other.
  Status kill(int signum);
  // Publishes a lifecycle event of this block (a no-op without a bus).
  void emit(std::string action, Json details = Json::object()) const {
    if (env_.on_event) env_.on_event(std::move(action), std::move(details));
  }
  // A signal to the running command (not an init step); UV_ESRCH when none runs.
  Status send_signal(int signum);
  bool start_deferred() const { return start_deferred_; }

  const ResolvedBlock& spec() const { return spec_; }
  BlockState state() const { return state_; }
  const std::string& reason() const { return reason_; }
  int pid() const { return process_ ? process_->pid() : 0; }
  int restarts() const { return backoff_.restarts(); }
  // Since the command was spawned; 0 when no command runs.
  uint64_t uptime_ms() const {
    return process_ && phase_ == Phase::command ? uv_now(env_.loop) - started_at_ : 0;
  }
  SandboxKind sandbox_kind() const { return env_.spawner->kind(); }
  std::string limits_enforcement() const { return env_.spawner->limits_enforcement(); }
  std::optional<CgroupUsage> usage() const { return process_ ? process_->usage() : std::nullopt; }
  const std::optional<ExitRecord>& last_exit() const { return last_exit_; }
  const std::optional<HealthRecord>& last_health() const { return last_health_; }
  BlockLogs& logs() { return *logs_; }
  std::shared_ptr<BlockLogs> shared_logs() const { return logs_; }
  // What `stackie exec` runs: the command inside this block's sandbox; empty when not running.
  // `pass_env`: names whose values the spawner puts in the argv's environment (Process).
  std::vector<std::string> join_argv(const std::vector<std::string>& command,
                                     const std::vector<std::string>& pass_env = {}) const;
  // `network: localhost` in a namespace of its own: its ports are reached only through
  // sockets made inside (DESIGN.md §6), and its `consumes` through listeners made inside.
  bool has_own_network() const;
  // Makes a socket inside the block's network namespace for `done` (at once, or an error when
  // the command is not running). Only to be called right away, never stored.
  void inside_socket(SocketDone done);

 private:
  enum class Phase { none, init, command };

  bool move(BlockEvent event, std::string reason = {});
  void start_if_deferred();
  void emit_kill(int signum, std::string_view reason) const;
  void launch();
  void spawn(Phase phase, const std::vector<std::string>& argv);
  void on_exit(Phase phase, const ExitStatus& status);
  void after_exit(const ExitStatus& status);
  void became_alive();
  void schedule_probe(Milliseconds delay);
  void probe();
  void probe_result(bool healthy, const std::string& detail);
  void arm_timer(Milliseconds delay, void (*fire)(BlockRunner&));
  void close_pipes();
  void forward_consumes(std::vector<int> listeners);
  std::string describe(const ExitStatus& status) const;
  bool cannot_run(const ExitStatus& status) const;
  std::string never_healthy_hint(Milliseconds ran, const std::string& detail) const;
  std::string cannot_run_message(const ExitStatus& status) const;
  // The signal N of a sandboxed block's exit status 128+N; 0 for any other exit.
  int lockbox_signal(const ExitStatus& status) const;

  BlockEnvironment env_;
  ResolvedBlock spec_;
  std::shared_ptr<BlockLogs> logs_;
  BlockState state_ = BlockState::created;
  std::string reason_;
  RestartBackoff backoff_;

  Phase phase_ = Phase::none;
  std::unique_ptr<Process> process_;
  std::vector<OutputPipe*> pipes_;
  std::vector<std::unique_ptr<PortForward>> consume_forwards_;  // while the command runs
  std::unique_ptr<EgressProxy> egress_;                         // network: outbound
  uint64_t started_at_ = 0;                 // uv_now when the command was spawned
  StopCause stop_cause_ = StopCause::none;  // while stopping: asked, or forced by health
  bool start_deferred_ = false;             // a start came while stopping (the table's defer)
  bool killed_after_timeout_ = false;
  int64_t restart_delay_ms_ = 0;  // of the restart the backoff timer waits for

  // One timer for the state-exclusive waits: start_period (starting), backoff delay
  // (backoff), stop timeout (stopping). A second one paces health probes.
  UvHandle<uv_timer_t> timer_;
  void (*timer_fire_)(BlockRunner&) = nullptr;
  UvHandle<uv_timer_t> probe_timer_;
  std::unique_ptr<ProbeHandle> probe_;
  int probe_failures_ = 0;
  bool exec_seen_ = false;  // on_exec came before spawn() returned
  std::optional<ExitRecord> last_exit_;
  std::optional<HealthRecord> last_health_;
};

}  // namespace stackie
