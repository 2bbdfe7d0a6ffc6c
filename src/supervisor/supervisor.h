// Every stack the user has up, behind one in-process API: what the daemon's IPC handlers call
// and what the tests drive directly. Single-threaded: call it on the loop's thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/stack_runner.h"

namespace stackie {

struct BlockStatus {
  std::string stack;
  std::string block;
  std::string sandbox_id;
  BlockState state = BlockState::created;
  std::string reason;
  int pid = 0;
  int restarts = 0;
  uint64_t uptime_ms = 0;  // 0 when not running
  bool has_health_check = false;
  SandboxKind sandbox = SandboxKind::passthrough;
  std::vector<ServedPort> serves;
  std::vector<MovedPort> moved_ports;
  std::string network;  // localhost, outbound, host or none (the block's sandbox network)
  std::optional<ExitRecord> last_exit;
  std::optional<HealthRecord> last_health;
  std::string log_error;  // why its log files are not being written; "" when they are
  uint64_t log_warnings = 0, log_errors = 0, log_fatals = 0;  // lines announcing each
  std::string limits_enforcement;    // Spawner::limits_enforcement of the block's spawner
  std::optional<CgroupUsage> usage;  // from its cgroup, while it runs in one
  // A shared instance (stack kSharedStack): the stacks that use it, by name.
  std::vector<std::string> used_by;
};

struct BlockProgress {
  std::string stack;
  std::string block;
  BlockState state = BlockState::created;
  std::string reason;
  bool has_health_check = false;
};

class Supervisor {
 public:
  using Done = std::function<void(Status)>;
  using Progress = std::function<void(const BlockProgress&)>;

  explicit Supervisor(SupervisorConfig config);
  // How sandboxed blocks' limits are enforced (Spawner::limits_enforcement).
  std::string limits_enforcement() const {
    return config_.sandboxed ? config_.sandboxed->limits_enforcement()
                             : "none (stackie-lockbox not found)";
  }
  ~Supervisor();  // kills every block that still runs
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Bring a stack up, or re-apply it when it is already up. `done` runs once: ok when every
  // block is running, an error naming the failed block (with its last log lines) otherwise.
  // `restoring`: the daemon bringing back its state file's stacks, not a user's request: a
  // user's `up` of that stack then is not refused as busy (it re-applies and waits too).
  void up(ResolvedStack stack, StackOptions options, Progress progress, Done done,
          bool restoring = false);
  // Stop a stack in reverse dependency order; `done` when every block is down.
  void down(const std::string& stack, Done done);
  // Stop `blocks` of a stack and leave them out of it (the rest stay as they are); `done` when
  // they are stopped. The caller chooses them (dependants included): Daemon::down_blocks.
  void remove_blocks(const std::string& stack, const std::vector<std::string>& blocks, Done done);
  // Down every stack (SIGTERM of the daemon); `done` when nothing runs.
  void shutdown(std::function<void()> done);

  bool has_stack(const std::string& stack) const;
  std::vector<std::string> stacks() const;
  const StackRunner* stack(const std::string& name) const;
  std::vector<BlockStatus> ps(const std::string& stack = {}) const;
  // ps(stack) and the shared instances the stack uses (each once, with its users).
  std::vector<BlockStatus> ps_with_shared(const std::string& stack) const;

  // Whether `stack`'s shared blocks can have their instances (stack/shared_mode.h): an error
  // naming the block, the setting and the stack that started the instance when another stack
  // uses it with other settings. Checked again by up(); the daemon asks first, so that a
  // refused stack is not recorded.
  Status check_shared(const ResolvedStack& stack) const;
  // The stacks that use shared instance `instance` now (up, or going down but not yet down).
  std::vector<std::string> shared_users(const std::string& instance) const;

  Result<std::vector<LogLine>> tail(const std::string& stack, const std::string& block,
                                    size_t lines) const;
  // The follower stays attached across restarts and re-applies of the block, until unfollow()
  // or the stack goes down.
  Result<uint64_t> follow(const std::string& stack, const std::string& block, LogSink* sink);
  void unfollow(const std::string& stack, const std::string& block, uint64_t id);

  // Why an `up` or `down` of `stack` would be refused now (another one is in progress), or
  // nullopt. One operation at a time per stack: a second one is refused as busy, except `down`
  // during `up`, which ends that `up` (its `done` says the stack was taken down).
  std::optional<Error> busy_for_up(const std::string& stack) const;
  std::optional<Error> busy_for_down(const std::string& stack) const;

  // start/stop/restart of one block. `done`, when set, runs once: for start and restart when
  // the block is running (healthy when it has a check) or has failed, or was stopped by
  // someone else, or its stack went down, each with its own message; for stop when it is
  // stopped. Without `done` they return at once. A start while the block is stopping is kept
  // and done once the stop completed, never dropped.
  Status start_block(const std::string& stack, const std::string& block, Done done = {});
  Status stop_block(const std::string& stack, const std::string& block, Done done = {});
  Status restart_block(const std::string& stack, const std::string& block, Done done = {});
  // One signal to the block's command (it must be running).
  Status signal_block(const std::string& stack, const std::string& block, int signum);
  // `stackie exec`: the argv that runs `command` inside the running block's sandbox.
  Result<std::vector<std::string>> join_argv(const std::string& stack, const std::string& block,
                                             const std::vector<std::string>& command) const;

  uv_loop_t* loop() const { return config_.loop; }
  // The lifecycle events of every block (`events`).
  EventBus& events() { return *config_.events; }
  // Sends `signum` to every process of the block (`kill`): what follows is the restart policy's.
  Status kill_block(const std::string& stack, const std::string& block, int signum);

  // Every state change of every block (the daemon logs them).
  void set_observer(Progress observer) { observer_ = std::move(observer); }

 private:
  struct Waiter {
    Progress progress;
    Done done;
    bool restoring = false;
  };
  // A start, restart or stop waiting for its block to settle.
  struct BlockWaiter {
    std::string block;
    bool want_running = true;  // start/restart; false: stop
    bool started = false;      // seen with a process since the request (start/restart)
    Done done;
  };
  // A remove_blocks() waiting for its blocks to be gone.
  struct RemovalWaiter {
    std::vector<std::string> blocks;
    Done done;
  };
  struct Entry {
    std::unique_ptr<StackRunner> runner;
    std::vector<RemovalWaiter> removal_waiters;
    std::vector<Waiter> up_waiters;
    std::vector<Done> down_waiters;
    std::vector<BlockWaiter> block_waiters;
  };
  void on_block(StackRunner& stack, const BlockRunner& block);
  void on_settled(StackRunner& stack);
  void settle_up_waiters(Entry& entry, StackRunner& stack);
  void settle_block_waiters(Entry& entry, StackRunner& stack);
  Result<BlockRunner*> find_block(const std::string& stack, const std::string& block);
  void check_shutdown();
  // Shared instances (supervisor_shared.cc). attach_shared() adds to the shared stack what
  // `stack` asks for (and replaces an instance only it uses); release_shared() stops each of
  // `instances` that no stack uses any more, `done` once they are stopped.
  Status attach_shared(const ResolvedStack& stack);
  void release_shared(const std::vector<std::string>& instances, std::function<void()> done);
  BlockRunner* shared_runner(const std::string& instance);
  void on_shared_block(const BlockRunner& block);
  static std::vector<std::string> shared_instances(const ResolvedStack& stack);

  EventBus events_;  // before stacks_: the blocks' `destroy` events outlive them
  SupervisorConfig config_;
  std::map<std::string, Entry> stacks_;
  // Which stack started each running shared instance (for the conflict message).
  std::map<std::string, std::string> shared_started_by_;
  Progress observer_;
  std::function<void()> shutdown_done_;
};

}  // namespace stackie
