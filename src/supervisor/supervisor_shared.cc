// `mode: shared` in the supervisor (stack/shared_mode.h, stackie-stack.yml(5) SHARED BLOCKS):
// every shared instance is a block of one stack of the supervisor's own, kSharedStack, which
// no stack file can name. A stack that uses one does not run it: its StackRunner finds the
// instance through SupervisorConfig::shared_runner, for its dependants' start, its consumers'
// connections and its `up`'s answer.
//
// Who uses an instance is never counted: it is the stacks that are up and list it, so it is as
// persistent as they are (the state file brings them back, and with them their instances) and
// cannot drift. The first `up` that asks starts it; a stack's `down` releases it once the
// stack's own blocks are down (its consumers first), and the last one's `down` stops it and
// answers only when it is stopped.
#include <algorithm>

#include "stack/shared_mode.h"
#include "supervisor/supervisor.h"

namespace stackie {

namespace {

const ResolvedBlock* find_spec(const ResolvedStack& stack, const std::string& name) {
  for (const auto& block : stack.blocks)
    if (block.name == name) return &block;
  return nullptr;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::vector<std::string> Supervisor::shared_instances(const ResolvedStack& stack) {
  std::vector<std::string> out;
  for (const auto& block : stack.blocks)
    if (!block.shared_instance.empty() &&
        std::find(out.begin(), out.end(), block.shared_instance) == out.end())
      out.push_back(block.shared_instance);
  return out;
}

std::vector<std::string> Supervisor::shared_users(const std::string& instance) const {
  std::vector<std::string> users;
  for (const auto& [name, entry] : stacks_) {
    if (name == kSharedStack) continue;
    auto used = shared_instances(entry.runner->spec());
    if (std::find(used.begin(), used.end(), instance) != used.end()) users.push_back(name);
  }
  return users;
}

BlockRunner* Supervisor::shared_runner(const std::string& instance) {
  auto it = stacks_.find(kSharedStack);
  return it == stacks_.end() ? nullptr : it->second.runner->find(instance);
}

Status Supervisor::check_shared(const ResolvedStack& stack) const {
  const StackRunner* shared = this->stack(kSharedStack);
  std::vector<const ResolvedBlock*> asked;
  for (const auto& block : stack.blocks) {
    const std::string& instance = block.shared_instance;
    if (instance.empty()) continue;
    for (const ResolvedBlock* other : asked)
      if (other->shared_instance == instance)
        if (auto differs = shared_difference(shared_instance_spec(*other), block))
          return Error{UV_EINVAL, "blocks '" + other->name + "' and '" + block.name +
                                      "' of stack '" + stack.name + "' ask for shared instance " +
                                      instance + " with different " + *differs};
    asked.push_back(&block);
    const ResolvedBlock* running = shared ? find_spec(shared->spec(), instance) : nullptr;
    if (running == nullptr) continue;
    std::vector<std::string> others = shared_users(instance);
    std::erase(others, stack.name);
    if (others.empty()) continue;  // only this stack uses it: its new settings replace it
    auto differs = shared_difference(*running, block);
    if (!differs) continue;
    auto started = shared_started_by_.find(instance);
    std::string starter = started != shared_started_by_.end() ? started->second : others.front();
    return Error{UV_EINVAL, "block '" + block.name + "' of stack '" + stack.name +
                                "' (mode shared) asks for " + *differs +
                                " other than shared instance " + instance + " started by stack '" +
                                starter + "' (used by " + join(others) + "): ask for the same " +
                                *differs + ", or use mode own"};
  }
  return {};
}

Status Supervisor::attach_shared(const ResolvedStack& stack) {
  auto it = stacks_.find(kSharedStack);
  ResolvedStack next;
  if (it != stacks_.end()) next = it->second.runner->spec();
  next.name = kSharedStack;
  bool any = false;
  for (const auto& block : stack.blocks) {
    if (block.shared_instance.empty()) continue;
    any = true;
    ResolvedBlock wanted = shared_instance_spec(block);
    next.storage_root = wanted.policy.storage_root;  // where a new instance's logs go
    auto found = std::find_if(next.blocks.begin(), next.blocks.end(),
                              [&](const ResolvedBlock& b) { return b.name == wanted.name; });
    if (found == next.blocks.end()) {
      shared_started_by_[wanted.name] = stack.name;
      next.blocks.push_back(std::move(wanted));
    } else if (shared_difference(*found, wanted)) {
      // check_shared() let it through: no other stack uses it, so this one's settings win.
      shared_started_by_[wanted.name] = stack.name;
      *found = std::move(wanted);
    }
  }
  if (!any) return {};
  if (it != stacks_.end()) return it->second.runner->apply(std::move(next));
  auto runner = StackRunner::create(
      config_, std::move(next), StackOptions{},
      [this](StackRunner& s, const BlockRunner& b) { on_block(s, b); },
      [this](StackRunner& s) { on_settled(s); });
  if (!runner.ok()) return runner.take_error();
  Entry entry;
  entry.runner = std::move(runner).value();
  stacks_.emplace(kSharedStack, std::move(entry));
  return {};
}

void Supervisor::release_shared(const std::vector<std::string>& instances,
                                std::function<void()> done) {
  std::vector<std::string> unused;
  for (const auto& instance : instances)
    if (shared_users(instance).empty()) unused.push_back(instance);
  auto it = stacks_.find(kSharedStack);
  if (unused.empty() || it == stacks_.end()) {
    if (done) done();
    return;
  }
  StackRunner& shared = *it->second.runner;
  ResolvedStack next = shared.spec();
  std::erase_if(next.blocks, [&](const ResolvedBlock& block) {
    return std::find(unused.begin(), unused.end(), block.name) != unused.end();
  });
  for (const auto& instance : unused) shared_started_by_.erase(instance);
  // Going down already (the daemon stopping): the instances stop with it.
  if (!shared.apply(std::move(next), /*restart_stopped=*/false).ok()) {
    if (done) done();
    return;
  }
  it->second.removal_waiters.push_back({unused, [done](Status) {
                                          if (done) done();
                                        }});
}

// A shared instance changed state: each stack that uses it sees it (progress of its `up`, under
// the instance's name, as its `up` lists it) and decides again (its dependants).
void Supervisor::on_shared_block(const BlockRunner& block) {
  for (auto& [name, entry] : stacks_) {
    if (name == kSharedStack) continue;
    for (const auto& spec : entry.runner->spec().blocks) {
      if (spec.shared_instance != block.spec().name) continue;
      BlockProgress progress{name, block.spec().name, block.state(), block.reason(),
                             block.spec().health.kind != HealthCheck::Kind::none};
      for (auto& waiter : entry.up_waiters)
        if (waiter.progress) waiter.progress(progress);
      entry.runner->schedule();
      break;  // once per stack, however many of its names stand for it
    }
  }
}

std::vector<BlockStatus> Supervisor::ps_with_shared(const std::string& stack) const {
  std::vector<BlockStatus> rows = ps(stack);
  if (stack.empty() || stack == kSharedStack) return rows;
  auto it = stacks_.find(stack);
  if (it == stacks_.end()) return rows;
  auto used = shared_instances(it->second.runner->spec());
  for (auto& row : ps(kSharedStack))
    if (std::find(used.begin(), used.end(), row.block) != used.end())
      rows.push_back(std::move(row));
  return rows;
}

}  // namespace stackie
