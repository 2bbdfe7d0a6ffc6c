#include "supervisor/stack_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/safe_open.h"
#include "stack/paths.h"
#include "stack/shared_mode.h"

namespace stackie {

namespace {

// Sandboxed blocks cannot run when stackie-lockbox is missing; say so instead of falling back
// to no isolation (DESIGN.md §5: fail closed).
class UnavailableSpawner final : public Spawner {
 public:
  SandboxKind kind() const override { return native_sandbox_kind(); }
  Result<std::unique_ptr<Process>> spawn(uv_loop_t*, const SpawnRequest&, ExitCallback) override {
    return Error{UV_ENOENT,
                 "no sandbox launcher available (stackie-lockbox not found); "
                 "set STACKIE_LOCKBOX or run the block with sandbox: false"};
  }
};

UnavailableSpawner unavailable_spawner;

bool finished(BlockState state) {
  return state == BlockState::stopped || state == BlockState::failed ||
         state == BlockState::created;
}

const ServedPort* find_port(const ResolvedBlock& block, const std::string& name) {
  for (const auto& port : block.serves)
    if (port.name == name) return &port;
  return nullptr;
}

const ResolvedBlock* find_block(const ResolvedStack& stack, const std::string& name) {
  for (const auto& block : stack.blocks)
    if (block.name == name) return &block;
  return nullptr;
}

// The host side of a served port (which host port, and why) is the forwarder's business, not
// the block's: a block whose only change is a host port keeps running (issue 16).
ServedPort inside_view(ServedPort port) {
  port.host_port = 0;
  return port;
}

bool same_block(const ResolvedBlock& running, const ResolvedBlock& next, bool own_network) {
  if (!own_network) return running == next;  // on the host's network the port is its own
  ResolvedBlock a = running, b = next;
  a.moved_ports.clear();
  b.moved_ports.clear();
  for (auto& port : a.serves) port = inside_view(port);
  for (auto& port : b.serves) port = inside_view(port);
  return a == b;
}

// True when something `consumer` consumes from a provider changed between the two stacks.
bool consumed_port_changed(const ResolvedBlock& consumer, const ResolvedStack& before,
                           const ResolvedStack& after) {
  for (const auto& used : consumer.consumes) {
    const ResolvedBlock* old_provider = find_block(before, used.provider);
    const ResolvedBlock* new_provider = find_block(after, used.provider);
    if (old_provider == nullptr || new_provider == nullptr) return true;
    const ServedPort* old_port = find_port(*old_provider, used.provider_port);
    const ServedPort* new_port = find_port(*new_provider, used.provider_port);
    if ((old_port == nullptr) != (new_port == nullptr)) return true;
    if (old_port != nullptr && !(inside_view(*old_port) == inside_view(*new_port))) return true;
  }
  return false;
}

}  // namespace

StackRunner::StackRunner(const SupervisorConfig& config, ResolvedStack spec, StackOptions options,
                         BlockChanged on_block, Settled on_settled)
    : config_(config),
      spec_(std::move(spec)),
      options_(options),
      on_block_(std::move(on_block)),
      on_settled_(std::move(on_settled)) {
  pump_timer_.init([this](uv_timer_t* timer) { return uv_timer_init(config_.loop, timer); }, this);
}

Result<std::unique_ptr<StackRunner>> StackRunner::create(const SupervisorConfig& config,
                                                         ResolvedStack spec, StackOptions options,
                                                         BlockChanged on_block,
                                                         Settled on_settled) {
  std::unique_ptr<StackRunner> stack(new StackRunner(config, ResolvedStack{}, options,
                                                     std::move(on_block), std::move(on_settled)));
  stack->spec_.name = spec.name;
  STACKIE_TRY(stack->apply(std::move(spec)));
  return stack;
}

StackRunner::~StackRunner() {
  pump_timer_.close();  // first: a runner going away below may ask for a pump
  active_.clear();
  retiring_.clear();
}

Result<std::unique_ptr<BlockRunner>> StackRunner::make_runner(const ResolvedBlock& block) {
  auto& logs = logs_[block.name];
  if (!logs) {
    std::string directory;
    if (!spec_.storage_root.empty()) directory = log_directory(block.sandbox_id);
    STACKIE_TRY_ASSIGN(opened,
                       BlockLogs::open(block.name, directory, config_.logs, spec_.storage_root));
    logs = opened;
  }
  BlockEnvironment env;
  env.loop = config_.loop;
  env.spawner = block.sandboxed ? config_.sandboxed : config_.passthrough;
  if (env.spawner == nullptr) env.spawner = &unavailable_spawner;
  env.restart = config_.restart;
  if (block.sandboxed) env.confine_policy = config_.confine_policy;
  env.port_address = config_.port_address ? config_.port_address(block) : loopback_port_address();
  env.consume_upstream = [this](const ConsumedPort& consume) { return consume_upstream(consume); };
  // Notify now (progress must see every state), decide later (pump).
  auto self = std::make_shared<BlockRunner*>(nullptr);
  env.on_change = [this, self] {
    if (on_block_) on_block_(*this, **self);
    schedule();
  };
  // Events carry copies, not `this`: a runner's `destroy` comes from its destructor, which may
  // run while this stack is being destroyed.
  if (EventBus* bus = config_.events)
    env.on_event = [bus, stack = spec_.name, name = block.name, id = block.sandbox_id](
                       std::string action, Json details) {
      bus->publish(stack, name, id, std::move(action), std::move(details));
    };
  auto runner = std::make_unique<BlockRunner>(std::move(env), block, logs);
  *self = runner.get();
  if (config_.events) config_.events->publish(spec_.name, block.name, block.sandbox_id, "create");
  return runner;
}

Status StackRunner::apply(ResolvedStack next, bool restart_stopped) {
  if (going_down_) return Error{UV_EBUSY, "stack " + spec_.name + " is going down"};
  STACKIE_TRY(open_host_forwards(next));   // first: a port that cannot be had changes nothing
  spec_.storage_root = next.storage_root;  // where new blocks' logs go
  std::vector<std::unique_ptr<BlockRunner>> kept;
  for (const auto& block : next.blocks) {
    if (!runs_here(next, block)) continue;  // the shared stack runs it
    auto it = std::find_if(active_.begin(), active_.end(),
                           [&](const auto& r) { return r->spec().name == block.name; });
    bool unchanged =
        it != active_.end() && same_block((*it)->spec(), block, forwards_host_ports(block)) &&
        !consumed_port_changed(block, spec_, next) &&
        (!restart_stopped ||
         ((*it)->state() != BlockState::stopped && (*it)->state() != BlockState::failed));
    if (unchanged) {
      kept.push_back(std::move(*it));
      active_.erase(it);
      continue;
    }
    if (it != active_.end()) {
      retiring_.push_back(std::move(*it));
      active_.erase(it);
    }
    STACKIE_TRY_ASSIGN(runner, make_runner(block));
    kept.push_back(std::move(runner));
  }
  for (auto& gone : active_) retiring_.push_back(std::move(gone));  // removed from the file
  active_ = std::move(kept);
  for (auto& old : retiring_) old->stop();
  spec_ = std::move(next);
  schedule();
  return {};
}

void StackRunner::down() {
  going_down_ = true;
  host_forwards_.clear();  // the ports are free again at once
  schedule();
}

void StackRunner::schedule() {
  if (!pump_timer_ || uv_is_active(pump_timer_.handle())) return;
  uv_timer_start(
      pump_timer_.get(), [](uv_timer_t* t) { static_cast<StackRunner*>(t->data)->pump(); }, 0, 0);
}

bool StackRunner::dependencies_running(const BlockRunner& block) const {
  for (const auto& name : block.spec().depends_on) {
    const BlockRunner* dependency = runner_of(name);
    if (dependency == nullptr) return false;
    // A shared instance goes by its own name; the condition is written with the stack's.
    if (dependency->spec().name != name) {
      if (dependency->state() != BlockState::running) return false;
      continue;
    }
    if (!condition_met(block.spec(), *dependency)) return false;
  }
  return true;
}

BlockRunner* StackRunner::runner_of(const std::string& block) const {
  for (const auto& runner : active_)
    if (runner->spec().name == block) return runner.get();
  const ResolvedBlock* spec = find_block(spec_, block);
  if (spec == nullptr || runs_here(spec_, *spec) || !config_.shared_runner) return nullptr;
  return config_.shared_runner(spec->shared_instance);
}

bool StackRunner::runs_here(const ResolvedStack& stack, const ResolvedBlock& block) {
  return block.shared_instance.empty() || stack.name == kSharedStack;
}

std::vector<const BlockRunner*> StackRunner::shared_runners() const {
  std::vector<const BlockRunner*> out;
  for (const auto& block : spec_.blocks)
    if (!runs_here(spec_, block))
      out.push_back(config_.shared_runner ? config_.shared_runner(block.shared_instance) : nullptr);
  return out;
}

// Whether `dependency` is where `dependant` waits for it (depends_on conditions).
bool StackRunner::condition_met(const ResolvedBlock& dependant, const BlockRunner& dependency) {
  DependCondition condition = DependCondition::healthy;
  for (const auto& [name, wanted] : dependant.depend_conditions)
    if (name == dependency.spec().name) condition = wanted;
  switch (condition) {
    case DependCondition::healthy: return dependency.state() == BlockState::running;
    case DependCondition::started:
      return dependency.state() == BlockState::running ||
             (dependency.state() == BlockState::starting && dependency.pid() > 0) ||
             completed(dependency);
    case DependCondition::completed_successfully: return completed(dependency);
  }
  return false;
}

// A one-shot task (`restart: "no"`) that ran and exited 0: done, not down.
bool StackRunner::completed(const BlockRunner& block) {
  const auto& exit = block.last_exit();
  return block.spec().restart == RestartPolicy::no && block.state() == BlockState::stopped &&
         exit.has_value() && exit->code == 0 && exit->signal == 0 && block.pid() == 0;
}

bool StackRunner::has_live_dependants(const BlockRunner& block) const {
  for (const auto& other : active_) {
    if (finished(other->state())) continue;
    const auto& deps = other->spec().depends_on;
    if (std::find(deps.begin(), deps.end(), block.spec().name) != deps.end()) return true;
  }
  return false;
}

void StackRunner::pump() {
  std::erase_if(retiring_, [](const auto& r) { return finished(r->state()); });
  if (going_down_) {
    // Reverse dependency order: a block stops once nothing that depends on it is alive.
    for (auto it = active_.rbegin(); it != active_.rend(); ++it)
      if (!finished((*it)->state()) && !has_live_dependants(**it))
        (*it)->stop();
      else if ((*it)->state() == BlockState::created)
        (*it)->stop();
    if (all_down() && options_.ephemeral) remove_storage();
  } else {
    for (auto& block : active_) {
      if (block->state() != BlockState::created) continue;
      bool predecessor_alive = std::any_of(retiring_.begin(), retiring_.end(), [&](const auto& r) {
        return r->spec().name == block->spec().name;
      });
      if (!predecessor_alive && dependencies_running(*block)) block->start();
    }
  }
  on_settled_(*this);  // may destroy this: nothing after it
}

bool StackRunner::all_running() const {
  if (!retiring_.empty()) return false;
  for (const BlockRunner* shared : shared_runners())
    if (shared == nullptr || shared->state() != BlockState::running) return false;
  return std::all_of(active_.begin(), active_.end(), [](const auto& r) {
    return r->state() == BlockState::running || completed(*r);
  });
}

bool StackRunner::all_down() const {
  return retiring_.empty() && std::all_of(active_.begin(), active_.end(), [](const auto& r) {
           return r->state() == BlockState::stopped || r->state() == BlockState::failed;
         });
}

const BlockRunner* StackRunner::first_failed() const {
  for (const BlockRunner* shared : shared_runners())
    if (shared != nullptr && shared->state() == BlockState::failed) return shared;
  for (const auto& block : active_)
    if (block->state() == BlockState::failed) return block.get();
  return nullptr;
}

const BlockRunner* StackRunner::first_stopped() const {
  // A shared instance someone stopped (`stackie stop @shared/NAME`) will not run by waiting.
  for (const BlockRunner* shared : shared_runners())
    if (shared != nullptr && shared->state() == BlockState::stopped && !shared->start_deferred())
      return shared;
  // A one-shot task that completed is done, not stopped: `up` goes on with its dependants.
  for (const auto& block : active_)
    if (block->state() == BlockState::stopped && !completed(*block)) return block.get();
  return nullptr;
}

BlockRunner* StackRunner::find(const std::string& block) {
  for (auto& runner : active_)
    if (runner->spec().name == block) return runner.get();
  return nullptr;
}

bool StackRunner::holds(const std::string& block) const {
  auto named = [&](const auto& runner) { return runner->spec().name == block; };
  return std::any_of(active_.begin(), active_.end(), named) ||
         std::any_of(retiring_.begin(), retiring_.end(), named);
}

std::vector<const BlockRunner*> StackRunner::blocks() const {
  std::vector<const BlockRunner*> out;
  for (const auto& runner : active_) out.push_back(runner.get());
  return out;
}

std::shared_ptr<BlockLogs> StackRunner::logs_of(const std::string& block) const {
  auto it = logs_.find(block);
  return it == logs_.end() ? nullptr : it->second;
}

bool StackRunner::forwards_host_ports(const ResolvedBlock& block) const {
  return block.sandboxed && block.policy.network == NetworkMode::localhost &&
         config_.sandboxed != nullptr && config_.sandboxed->kind() == SandboxKind::linux_namespaces;
}

// One host listener per served port of every `network: localhost` block: kept when the port
// is the same, opened when new, closed when gone. Nothing changes unless all could be opened.
Status StackRunner::open_host_forwards(const ResolvedStack& next) {
  std::map<std::string, std::unique_ptr<PortForward>> wanted;
  for (const auto& block : next.blocks) {
    // A shared instance's ports are forwarded once, by the shared stack.
    if (!forwards_host_ports(block) || !runs_here(next, block)) continue;
    for (const auto& port : block.serves) {
      std::string key = block.name + "/" + port.name;
      int host = port.host_port != 0 ? port.host_port : port.port;
      auto current = host_forwards_.find(key);
      if (current != host_forwards_.end() && current->second->port() == host) {
        wanted[key] = std::move(current->second);
        host_forwards_.erase(current);
        continue;
      }
      auto forward = PortForward::listen_host(
          config_.loop, host,
          [this, name = block.name, inside = port.port] { return upstream_to(name, inside); });
      if (!forward.ok()) {
        for (auto& [kept_key, kept] : wanted) host_forwards_[kept_key] = std::move(kept);
        return Error{forward.error().code, "host port " + std::to_string(host) + " for '" +
                                               block.name + "' (serves." + port.name +
                                               "): " + forward.error().message};
      }
      wanted[key] = std::move(*forward);
      if (config_.events) {
        Json details = Json::object({{"name", port.name},
                                     {"host", "127.0.0.1:" + std::to_string(host)},
                                     {"sandbox", port.port}});
        for (const auto& moved : block.moved_ports)
          if (moved.port == port.name && moved.host == host) {
            details.set("wanted", moved.wanted);
            details.set("note", moved.note);
          }
        config_.events->publish(next.name, block.name, block.sandbox_id, "port", details);
      }
    }
  }
  host_forwards_ = std::move(wanted);  // the rest close here
  return {};
}

// A connection for port `port` of `block` (inside its namespace, or on the host's loopback
// for a block that shares the host's network).
Result<Upstream> StackRunner::upstream_to(const std::string& block, int port) {
  BlockRunner* runner = runner_of(block);
  if (runner == nullptr) return Error{UV_ECONNREFUSED, "no block '" + block + "'"};
  Upstream upstream;
  upstream.port = port;
  if (runner->has_own_network())
    upstream.source = [runner](SocketDone done) { runner->inside_socket(std::move(done)); };
  return upstream;
}

Result<Upstream> StackRunner::consume_upstream(const ConsumedPort& consume) {
  const ResolvedBlock* provider = find_block(spec_, consume.provider);
  const ServedPort* port = provider ? find_port(*provider, consume.provider_port) : nullptr;
  if (port == nullptr)
    return Error{UV_ECONNREFUSED,
                 "no port '" + consume.provider_port + "' of '" + consume.provider + "'"};
  // A provider on the host's network listens there on its own port (its host port is the
  // same: the loader allocates it exactly).
  return upstream_to(consume.provider, port->port);
}

// --ephemeral: the storage goes with the stack. Only a directory right below the ephemeral
// base is removed, from the base's fd and without following any link in it (base/safe_open.h).
void StackRunner::remove_storage() {
  if (storage_removed_ || options_.ephemeral_base.empty()) return;
  auto below = path_below(options_.ephemeral_base, spec_.storage_root);
  if (!below || below->empty() || below->find('/') != std::string::npos) return;
  storage_removed_ = true;
  auto base = open_storage_root(options_.ephemeral_base, Privacy::private_);
  if (!base.ok()) return;
  (void)remove_tree_beneath(base->get(), *below, options_.ephemeral_base);
}

}  // namespace stackie
