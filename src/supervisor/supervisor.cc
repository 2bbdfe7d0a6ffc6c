#include "supervisor/supervisor.h"

#include <algorithm>

#include "stack/shared_mode.h"

namespace stackie {

Supervisor::Supervisor(SupervisorConfig config) : config_(std::move(config)) {
  if (config_.events == nullptr) config_.events = &events_;
  config_.shared_runner = [this](const std::string& instance) { return shared_runner(instance); };
}

Supervisor::~Supervisor() {
  stacks_.clear();
}

void Supervisor::up(ResolvedStack stack, StackOptions options, Progress progress, Done done,
                    bool restoring) {
  if (shutdown_done_) {
    done(Error{UV_ECANCELED, "the daemon is shutting down"});
    return;
  }
  std::string name = stack.name;
  if (auto busy = busy_for_up(name)) {
    done(std::move(*busy));
    return;
  }
  // Its shared instances first (started, or attached to when they run), so that its own
  // blocks find them; nothing of either starts when one is refused.
  if (Status checked = check_shared(stack); !checked.ok()) {
    done(checked.take_error());
    return;
  }
  std::vector<std::string> wanted_shared = shared_instances(stack);
  if (Status attached = attach_shared(stack); !attached.ok()) {
    done(attached.take_error());
    return;
  }
  auto it = stacks_.find(name);
  if (it == stacks_.end()) {
    auto runner = StackRunner::create(
        config_, std::move(stack), options,
        [this](StackRunner& s, const BlockRunner& b) { on_block(s, b); },
        [this](StackRunner& s) { on_settled(s); });
    if (!runner.ok()) {
      release_shared(wanted_shared, {});  // started for this stack alone: stopped again
      done(runner.take_error());
      return;
    }
    Entry entry;
    entry.runner = std::move(runner).value();
    entry.up_waiters.push_back({std::move(progress), std::move(done), restoring});
    stacks_.emplace(name, std::move(entry));
    return;
  }
  std::vector<std::string> had_shared = shared_instances(it->second.runner->spec());
  if (auto applied = it->second.runner->apply(std::move(stack)); !applied.ok()) {
    release_shared(wanted_shared, {});
    done(applied.take_error());
    return;
  }
  it->second.up_waiters.push_back({std::move(progress), std::move(done), restoring});
  release_shared(had_shared, {});  // those the stack no longer asks for, when no other does
}

std::optional<Error> Supervisor::busy_for_up(const std::string& stack) const {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return std::nullopt;
  if (it->second.runner->going_down())
    return Error{UV_EBUSY, "stack " + stack + " is going down; try again when it is down"};
  // A restore in progress is not someone's `up`: a user's `up` after a daemon restart joins it.
  const auto& waiters = it->second.up_waiters;
  if (std::any_of(waiters.begin(), waiters.end(), [](const Waiter& w) { return !w.restoring; }))
    return Error{UV_EBUSY,
                 "an up of stack " + stack + " is in progress; try again when it is done"};
  return std::nullopt;
}

std::optional<Error> Supervisor::busy_for_down(const std::string& stack) const {
  auto it = stacks_.find(stack);
  if (it != stacks_.end() && it->second.runner->going_down())
    return Error{UV_EBUSY, "stack " + stack + " is already going down"};
  return std::nullopt;
}

void Supervisor::down(const std::string& stack, Done done) {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) {
    done(Error{UV_ENOENT, "stack " + stack + " is not up"});
    return;
  }
  if (auto busy = busy_for_down(stack)) {
    done(std::move(*busy));
    return;
  }
  it->second.down_waiters.push_back(std::move(done));
  it->second.runner->down();
}

void Supervisor::remove_blocks(const std::string& stack, const std::vector<std::string>& blocks,
                               Done done) {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) {
    done(Error{UV_ENOENT, "stack " + stack + " is not up"});
    return;
  }
  if (auto busy = busy_for_down(stack)) {
    done(std::move(*busy));
    return;
  }
  StackRunner& runner = *it->second.runner;
  ResolvedStack next = runner.spec();
  std::vector<std::string> had_shared = shared_instances(next);
  std::erase_if(next.blocks, [&](const ResolvedBlock& block) {
    return std::find(blocks.begin(), blocks.end(), block.name) != blocks.end();
  });
  if (auto applied = runner.apply(std::move(next), /*restart_stopped=*/false); !applied.ok()) {
    done(applied.take_error());
    return;
  }
  // A shared block left out: its instance stops too when no other stack uses it.
  it->second.removal_waiters.push_back(
      {blocks, [this, had_shared, done = std::move(done)](Status result) {
         release_shared(had_shared, [done, result] { done(result); });
       }});
}

void Supervisor::shutdown(std::function<void()> done) {
  shutdown_done_ = std::move(done);
  // The shared instances stop as the last of their users goes (release_shared), after them.
  bool users = false;
  for (auto& [name, entry] : stacks_)
    if (name != kSharedStack) {
      entry.runner->down();
      users = true;
    }
  if (!users)
    if (auto shared = stacks_.find(kSharedStack); shared != stacks_.end())
      shared->second.runner->down();
  check_shutdown();
}

void Supervisor::check_shutdown() {
  if (shutdown_done_ && stacks_.empty()) {
    auto done = std::move(shutdown_done_);
    shutdown_done_ = [] {};  // stays set: no new `up` after shutdown
    done();
  }
}

void Supervisor::on_block(StackRunner& stack, const BlockRunner& block) {
  BlockProgress progress{stack.spec().name, block.spec().name, block.state(), block.reason(),
                         block.spec().health.kind != HealthCheck::Kind::none};
  if (observer_) observer_(progress);
  if (stack.spec().name == kSharedStack) on_shared_block(block);
  auto it = stacks_.find(stack.spec().name);
  if (it == stacks_.end()) return;
  for (auto& waiter : it->second.up_waiters)
    if (waiter.progress) waiter.progress(progress);
}

void Supervisor::on_settled(StackRunner& stack) {
  auto it = stacks_.find(stack.spec().name);
  if (it == stacks_.end()) return;
  Entry& entry = it->second;

  settle_block_waiters(entry, stack);
  settle_up_waiters(entry, stack);
  std::vector<Done> removed;
  std::erase_if(entry.removal_waiters, [&](RemovalWaiter& waiter) {
    bool gone = stack.going_down() ||
                std::none_of(waiter.blocks.begin(), waiter.blocks.end(),
                             [&](const std::string& block) { return stack.holds(block); });
    if (gone) removed.push_back(std::move(waiter.done));
    return gone;
  });
  for (auto& done : removed) done(Status{});

  if (stack.going_down() && stack.all_down()) {
    auto waiters = std::move(entry.down_waiters);
    std::vector<std::string> used = shared_instances(stack.spec());
    stacks_.erase(it);  // destroys the StackRunner: its pump ends right after this call
    // Its own blocks are down: now its shared instances, each when it was the last user; the
    // `down` answers once they are stopped.
    release_shared(used, [this, waiters]() mutable {
      for (auto& done : waiters) done(Status{});
      check_shutdown();
    });
    return;
  }
  // The shared stack with no instance left goes away (and the daemon may finish stopping).
  if (stack.spec().name == kSharedStack && stack.spec().blocks.empty() && stack.all_down() &&
      entry.up_waiters.empty() && entry.block_waiters.empty() && entry.removal_waiters.empty() &&
      entry.down_waiters.empty()) {
    stacks_.erase(it);
    check_shutdown();
  }
}

void Supervisor::settle_up_waiters(Entry& entry, StackRunner& stack) {
  if (entry.up_waiters.empty()) return;
  Status result;
  bool settled = false;
  if (stack.going_down()) {
    // The daemon stopping is "shutting down" (the client's exit 3); a `down` of this stack
    // is an answer of its own (exit 1), not a lost daemon.
    result = shutdown_done_
                 ? Status(Error{UV_ECANCELED, "the daemon is shutting down"})
                 : Status(Error{0, "stack " + stack.spec().name +
                                       " was taken down (stackie down) before it was up"});
    settled = true;
  } else if (const BlockRunner* failed = stack.first_failed()) {
    std::string message = "block " + failed->spec().name + " failed: " + failed->reason();
    std::string tail;
    for (const auto& line : failed->shared_logs()->tail(20))
      if (line.stream != LogStream::daemon) tail += "\n  " + line.text;
    if (!tail.empty()) message += "\nlast lines of its log:" + tail;
    result = Error{0, message};
    settled = true;
  } else if (const BlockRunner* stopped = stack.first_stopped()) {
    // Stopped by someone else (`stackie stop`) or a block that ended on its own with nothing
    // to restart: it will not become running by waiting.
    result = Error{0, "block " + stopped->spec().name + " is stopped (" + stopped->reason() +
                          "), not running; start it with 'stackie start " + stack.spec().name +
                          "/" + stopped->spec().name + "'"};
    settled = true;
  } else if (stack.all_running()) {
    settled = true;
  }
  if (!settled) return;
  auto waiters = std::move(entry.up_waiters);
  entry.up_waiters.clear();
  for (auto& waiter : waiters) waiter.done(result);
}

void Supervisor::settle_block_waiters(Entry& entry, StackRunner& stack) {
  std::vector<std::pair<Done, Status>> answers;
  std::erase_if(entry.block_waiters, [&](BlockWaiter& waiter) {
    const BlockRunner* block = stack.find(waiter.block);
    std::string name = stack.spec().name + "/" + waiter.block;
    std::optional<Status> result;
    if (block == nullptr || stack.going_down()) {
      result = Error{0, "stack " + stack.spec().name + " went down before " + name +
                            (waiter.want_running ? " was running" : " was stopped")};
    } else if (!waiter.want_running) {
      if (block->state() == BlockState::stopped || block->state() == BlockState::failed)
        result = Status{};
    } else {
      BlockState state = block->state();
      if (has_process(state) || state == BlockState::backoff) waiter.started = true;
      bool pending = block->start_deferred();
      if (state == BlockState::running)
        result = Status{};
      else if (state == BlockState::failed && waiter.started)
        result = Error{0, "block " + name + " failed: " + block->reason()};
      else if (state == BlockState::stopped && waiter.started && !pending)
        result = Error{
            0, "block " + name + " was stopped (" + block->reason() + ") before it was running"};
    }
    if (!result) return false;
    answers.emplace_back(std::move(waiter.done), std::move(*result));
    return true;
  });
  for (auto& [done, result] : answers) done(std::move(result));
}

bool Supervisor::has_stack(const std::string& stack) const {
  return stacks_.count(stack) != 0;
}

std::vector<std::string> Supervisor::stacks() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : stacks_) names.push_back(name);
  return names;
}

const StackRunner* Supervisor::stack(const std::string& name) const {
  auto it = stacks_.find(name);
  return it == stacks_.end() ? nullptr : it->second.runner.get();
}

std::vector<BlockStatus> Supervisor::ps(const std::string& stack) const {
  std::vector<BlockStatus> out;
  for (const auto& [name, entry] : stacks_) {
    if (!stack.empty() && name != stack) continue;
    for (const BlockRunner* block : entry.runner->blocks()) {
      BlockStatus row;
      row.stack = name;
      if (name == kSharedStack) row.used_by = shared_users(block->spec().name);
      row.block = block->spec().name;
      row.sandbox_id = block->spec().sandbox_id;
      row.state = block->state();
      row.reason = block->reason();
      row.pid = block->pid();
      row.restarts = block->restarts();
      row.uptime_ms = block->uptime_ms();
      row.has_health_check = block->spec().health.kind != HealthCheck::Kind::none;
      row.sandbox = block->sandbox_kind();
      // From the stack's spec: a block kept running across a re-apply whose host ports moved
      // still has its old spec.
      row.serves = block->spec().serves;
      row.moved_ports = block->spec().moved_ports;
      row.network = block->spec().outbound ? "outbound"
                                           : std::string(to_string(block->spec().policy.network));
      for (const auto& spec : entry.runner->spec().blocks)
        if (spec.name == row.block) {
          row.serves = spec.serves;
          row.moved_ports = spec.moved_ports;
        }
      row.last_exit = block->last_exit();
      row.last_health = block->last_health();
      row.log_error = block->shared_logs()->write_error();
      const BlockLogs& logs = *block->shared_logs();
      row.log_warnings = logs.lines_at(LogLevel::warn);
      row.log_errors = logs.lines_at(LogLevel::error);
      row.log_fatals = logs.lines_at(LogLevel::fatal);
      row.limits_enforcement = block->limits_enforcement();
      row.usage = block->usage();
      out.push_back(std::move(row));
    }
  }
  return out;
}

Result<BlockRunner*> Supervisor::find_block(const std::string& stack, const std::string& block) {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return Error{UV_ENOENT, "stack " + stack + " is not up"};
  BlockRunner* runner = it->second.runner->find(block);
  if (runner == nullptr) return Error{UV_ENOENT, "stack " + stack + " has no block " + block};
  return runner;
}

Result<std::vector<LogLine>> Supervisor::tail(const std::string& stack, const std::string& block,
                                              size_t lines) const {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return Error{UV_ENOENT, "stack " + stack + " is not up"};
  auto logs = it->second.runner->logs_of(block);
  if (!logs) return Error{UV_ENOENT, "stack " + stack + " has no block " + block};
  return logs->tail(lines);
}

Result<uint64_t> Supervisor::follow(const std::string& stack, const std::string& block,
                                    LogSink* sink) {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return Error{UV_ENOENT, "stack " + stack + " is not up"};
  auto logs = it->second.runner->logs_of(block);
  if (!logs) return Error{UV_ENOENT, "stack " + stack + " has no block " + block};
  return logs->follow(sink);
}

void Supervisor::unfollow(const std::string& stack, const std::string& block, uint64_t id) {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return;
  if (auto logs = it->second.runner->logs_of(block)) logs->unfollow(id);
}

Status Supervisor::start_block(const std::string& stack, const std::string& block, Done done) {
  STACKIE_TRY_ASSIGN(runner, find_block(stack, block));
  Entry& entry = stacks_[stack];
  runner->start();  // while stopping: kept by the runner, done once the stop is over
  if (done) entry.block_waiters.push_back({block, true, has_process(runner->state()), done});
  entry.runner->schedule();  // settles a waiter whose block already runs
  return {};
}

Status Supervisor::stop_block(const std::string& stack, const std::string& block, Done done) {
  STACKIE_TRY_ASSIGN(runner, find_block(stack, block));
  Entry& entry = stacks_[stack];
  runner->stop();  // also cancels a start kept for after a stop
  if (done) entry.block_waiters.push_back({block, false, false, done});
  entry.runner->schedule();
  return {};
}

Status Supervisor::restart_block(const std::string& stack, const std::string& block, Done done) {
  STACKIE_TRY_ASSIGN(runner, find_block(stack, block));
  Entry& entry = stacks_[stack];
  runner->emit("restart", Json::object({{"requested", true}}));
  if (has_process(runner->state())) runner->stop();
  runner->start();  // after a stop: kept until the stop is over
  // started=false: the stop that comes first must not be taken for the end of the wait.
  if (done) entry.block_waiters.push_back({block, true, false, done});
  entry.runner->schedule();
  return {};
}

Status Supervisor::kill_block(const std::string& stack, const std::string& block, int signum) {
  STACKIE_TRY_ASSIGN(runner, find_block(stack, block));
  return runner->kill(signum);
}

Status Supervisor::signal_block(const std::string& stack, const std::string& block, int signum) {
  STACKIE_TRY_ASSIGN(runner, find_block(stack, block));
  return runner->send_signal(signum);
}

Result<std::vector<std::string>> Supervisor::join_argv(
    const std::string& stack, const std::string& block,
    const std::vector<std::string>& command) const {
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return Error{UV_ENOENT, "stack " + stack + " is not up"};
  for (const BlockRunner* runner : it->second.runner->blocks()) {
    if (runner->spec().name != block) continue;
    auto argv = runner->join_argv(command);
    if (argv.empty())
      return Error{UV_ESRCH, "block " + block + " is " + std::string(to_string(runner->state()))};
    return argv;
  }
  return Error{UV_ENOENT, "stack " + stack + " has no block " + block};
}

}  // namespace stackie
