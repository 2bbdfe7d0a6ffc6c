// One stack that is up: its blocks, started in dependency order (a block starts only when every
// block it depends on is running; independent blocks start together), re-applied by difference
// (only changed blocks restart, plus consumers of a changed port), and taken down in reverse
// order. Scheduling decisions are made in pump(), deferred to the loop after any change, so
// that no callback re-enters a block that is in the middle of changing state.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/uv_handle.h"
#include "spawn/spawner.h"
#include "stack/stack_model.h"
#include "supervisor/block_logs.h"
#include "supervisor/block_runner.h"
#include "supervisor/event_bus.h"
#include "supervisor/port_forward.h"
#include "supervisor/restart_policy.h"

namespace stackie {

struct SupervisorConfig {
  uv_loop_t* loop = nullptr;
  Spawner* sandboxed = nullptr;    // for blocks with sandboxed == true
  Spawner* passthrough = nullptr;  // for sandbox: false / --no-sandbox
  RestartTuning restart;
  LogSettings logs;
  // How to reach a block's port P (the seam for the forwarder of network-namespaced blocks).
  // Unset: 127.0.0.1:P.
  std::function<PortAddress(const ResolvedBlock&)> port_address;
  // Where the blocks' lifecycle events go (the Supervisor sets its own); null: nowhere.
  EventBus* events = nullptr;
  // The runner of a `mode: shared` instance by its name (ResolvedBlock::shared_instance), run
  // by the Supervisor's shared stack, not by the stacks that use it; null when it is not
  // there. Unset: no block is shared.
  std::function<BlockRunner*(const std::string& instance)> shared_runner;
  // Applied to a sandboxed block's policy at each start (the daemon: the other stacks'
  // writable directories, supervisor/stack_neighbours.h, as they are then). May be empty.
  std::function<void(SandboxPolicy&)> confine_policy;
};

struct StackOptions {
  bool ephemeral = false;  // storage_root is removed when the stack goes down
  // --ephemeral: the directory the storage root must lie right below to be removed (a wrong
  // storage_root can then never wipe anything else).
  std::string ephemeral_base;
};

class StackRunner {
 public:
  using BlockChanged = std::function<void(StackRunner&, const BlockRunner&)>;
  // Called after each scheduling pass. It may destroy the StackRunner.
  using Settled = std::function<void(StackRunner&)>;

  static Result<std::unique_ptr<StackRunner>> create(const SupervisorConfig& config,
                                                     ResolvedStack spec, StackOptions options,
                                                     BlockChanged on_block, Settled on_settled);
  ~StackRunner();

  // Re-apply: unchanged blocks keep running; a block that is stopped or failed starts again
  // (`up` means "make every block run", whoever stopped it) unless `restart_stopped` is false
  // (`down BLOCK`: the others stay as they are). Blocks `next` lacks stop and go.
  Status apply(ResolvedStack next, bool restart_stopped = true);
  void down();

  const ResolvedStack& spec() const { return spec_; }
  // <storage>/logs/<sandbox-id>: where a block's log files are written (BlockLogs), and where
  // `status` and a `logs -f` that reads them find them.
  std::string log_directory(const std::string& sandbox_id) const {
    return spec_.storage_root + "/logs/" + sandbox_id;
  }
  const StackOptions& options() const { return options_; }
  bool going_down() const { return going_down_; }
  bool all_running() const;  // every block running, or a one-shot task that completed
  static bool completed(const BlockRunner& block);
  bool all_down() const;
  const BlockRunner* first_failed() const;
  const BlockRunner* first_stopped() const;
  BlockRunner* find(const std::string& block);
  // Whether a runner of `block` is still here, in the stack or still stopping after it left.
  bool holds(const std::string& block) const;
  std::vector<const BlockRunner*> blocks() const;
  std::shared_ptr<BlockLogs> logs_of(const std::string& block) const;
  void schedule();  // ask for a pump on the next loop turn

 private:
  StackRunner(const SupervisorConfig& config, ResolvedStack spec, StackOptions options,
              BlockChanged on_block, Settled on_settled);
  Result<std::unique_ptr<BlockRunner>> make_runner(const ResolvedBlock& block);
  void pump();
  bool dependencies_running(const BlockRunner& block) const;
  static bool condition_met(const ResolvedBlock& dependant, const BlockRunner& dependency);
  bool has_live_dependants(const BlockRunner& block) const;
  void remove_storage();
  bool forwards_host_ports(const ResolvedBlock& block) const;
  Status open_host_forwards(const ResolvedStack& next);
  Result<Upstream> upstream_to(const std::string& block, int port);
  // The runner of `block`: the stack's own, or the shared instance a shared block stands for
  // (found anew each time: the instance may have been replaced meanwhile).
  BlockRunner* runner_of(const std::string& block) const;
  // Whether `stack` runs `block` itself: a block of its own, or any block of the shared stack
  // (whose blocks are the instances).
  static bool runs_here(const ResolvedStack& stack, const ResolvedBlock& block);
  // The shared instances the stack's blocks stand for, in spec order (null: not there).
  std::vector<const BlockRunner*> shared_runners() const;
  Result<Upstream> consume_upstream(const ConsumedPort& consume);

  SupervisorConfig config_;
  ResolvedStack spec_;
  StackOptions options_;
  BlockChanged on_block_;
  Settled on_settled_;
  std::vector<std::unique_ptr<BlockRunner>> active_;    // in spec order
  std::vector<std::unique_ptr<BlockRunner>> retiring_;  // replaced or removed; stopping
  std::map<std::string, std::shared_ptr<BlockLogs>> logs_;
  // `serves` ports of `network: localhost` blocks: "BLOCK/PORT" -> the host listener. They
  // live as long as the stack is up, across restarts of their block.
  std::map<std::string, std::unique_ptr<PortForward>> host_forwards_;
  UvHandle<uv_timer_t> pump_timer_;
  bool going_down_ = false;
  bool storage_removed_ = false;
};

}  // namespace stackie
