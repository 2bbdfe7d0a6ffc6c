// Every stack the user has up, behind one in-process API: what the daemon's IPC handlers call
// and what the tests drive directly. Single-threaded: call it on the loop's thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
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
  ~Supervisor();  // kills every block that still runs
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Bring a stack up, or re-apply it when it is already up. `done` runs once: ok when every
  // block is running, an error naming the failed block (with its last log lines) otherwise.
  void up(ResolvedStack stack, StackOptions options, Progress progress, Done done);
  // Stop a stack in reverse dependency order; `done` when every block is down.
  void down(const std::string& stack, Done done);
  // Down every stack (SIGTERM of the daemon); `done` when nothing runs.
  void shutdown(std::function<void()> done);

  bool has_stack(const std::string& stack) const;
  std::vector<std::string> stacks() const;
  const StackRunner* stack(const std::string& name) const;
  std::vector<BlockStatus> ps(const std::string& stack = {}) const;

  Result<std::vector<LogLine>> tail(const std::string& stack, const std::string& block,
                                    size_t lines) const;
  // The follower stays attached across restarts and re-applies of the block, until unfollow()
  // or the stack goes down.
  Result<uint64_t> follow(const std::string& stack, const std::string& block, LogSink* sink);
  void unfollow(const std::string& stack, const std::string& block, uint64_t id);

  Status start_block(const std::string& stack, const std::string& block);
  Status stop_block(const std::string& stack, const std::string& block);
  Status restart_block(const std::string& stack, const std::string& block);
  // `stackie exec`: the argv that runs `command` inside the running block's sandbox.
  Result<std::vector<std::string>> join_argv(const std::string& stack, const std::string& block,
                                             const std::vector<std::string>& command) const;

  // Every state change of every block (the daemon logs them).
  void set_observer(Progress observer) { observer_ = std::move(observer); }

 private:
  struct Waiter {
    Progress progress;
    Done done;
  };
  struct Entry {
    std::unique_ptr<StackRunner> runner;
    std::vector<Waiter> up_waiters;
    std::vector<Done> down_waiters;
    std::vector<std::string> restart_pending;  // blocks to start again once stopped
  };
  void on_block(StackRunner& stack, const BlockRunner& block);
  void on_settled(StackRunner& stack);
  Result<BlockRunner*> find_block(const std::string& stack, const std::string& block);
  void check_shutdown();

  SupervisorConfig config_;
  std::map<std::string, Entry> stacks_;
  Progress observer_;
  std::function<void()> shutdown_done_;
};

}  // namespace stackie
