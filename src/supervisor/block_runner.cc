#include "supervisor/block_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "base/signal_name.h"
#include "supervisor/block_storage.h"
#include "supervisor/exit_description.h"
#include "supervisor/init_script.h"
#include "supervisor/output_pipe.h"

namespace stackie {

namespace {

UvHandle<uv_timer_t> new_timer(uv_loop_t* loop, void* data) {
  UvHandle<uv_timer_t> timer;
  // uv_timer_init only records the loop: it cannot fail.
  timer.init([loop](uv_timer_t* t) { return uv_timer_init(loop, t); }, data);
  return timer;
}

uint64_t wall_clock_ms() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

std::string last_lines(const BlockLogs& logs, size_t n) {
  std::string out;
  for (const auto& line : logs.tail(n)) {
    if (line.stream == LogStream::daemon) continue;
    out += "\n  " + line.text;
  }
  return out;
}

}  // namespace

BlockRunner::BlockRunner(BlockEnvironment env, ResolvedBlock spec, std::shared_ptr<BlockLogs> logs)
    : env_(std::move(env)),
      spec_(std::move(spec)),
      logs_(std::move(logs)),
      backoff_(env_.restart),
      timer_(new_timer(env_.loop, this)),
      probe_timer_(new_timer(env_.loop, this)) {}

BlockRunner::~BlockRunner() {
  emit("destroy");
  probe_.reset();
  consume_forwards_.clear();
  egress_.reset();
  process_.reset();  // the whole sandbox killed if still running
  close_pipes();
}

void BlockRunner::close_pipes() {
  while (!pipes_.empty()) pipes_.back()->close();
}

bool BlockRunner::move(BlockEvent event, std::string reason) {
  Step next = step(state_, event);
  if (next.outcome == Outcome::defer && event == BlockEvent::start) start_deferred_ = true;
  if (next.outcome != Outcome::move) return false;
  state_ = next.to;
  if (state_ != BlockState::stopping) stop_cause_ = StopCause::none;
  if (!reason.empty()) reason_ = std::move(reason);
  if (state_ == BlockState::starting || state_ == BlockState::running) {
    if (event == BlockEvent::start) reason_.clear();
  }
  logs_->note(std::string(to_string(state_)) + (reason_.empty() ? "" : ": " + reason_));
  if (env_.on_change) env_.on_change();
  return true;
}

void BlockRunner::start() {
  if (state_ == BlockState::backoff) uv_timer_stop(timer_.get());
  if (move(BlockEvent::start)) launch();
}

// A start that came while stopping: done now that the stop is over.
void BlockRunner::start_if_deferred() {
  if (!start_deferred_ || has_process(state_)) return;
  start_deferred_ = false;
  logs_->note("starting again, as asked while it was stopping");
  start();
}

void BlockRunner::launch() {
  killed_after_timeout_ = false;
  probe_failures_ = 0;
  // The loader never touches the disk: volumes, temp and runtime dirs are made here, just
  // before the sandbox is, so a fresh volume starts empty (and init runs on it); a volume whose
  // init was interrupted is emptied first (block_storage.h).
  auto prepared = prepare_storage(spec_, logs_->directory());
  if (!prepared.ok()) {
    move(BlockEvent::setup_failed, prepared.error().message);
    return;
  }
  for (const auto& note : *prepared) logs_->note(note);
  if (!spec_.init.empty())
    spawn(Phase::init, init_argv(spec_.init));
  else
    spawn(Phase::command, spec_.command);
}

void BlockRunner::spawn(Phase phase, const std::vector<std::string>& argv) {
  OutputPipe* out = OutputPipe::create(env_.loop, logs_, LogStream::out, &pipes_);
  OutputPipe* err = OutputPipe::create(env_.loop, logs_, LogStream::err, &pipes_);
  SpawnRequest request;
  request.argv = argv;
  request.policy = spec_.policy;
  // Each start, not once at `up`: a stack brought up since may write above what it is given.
  if (env_.confine_policy) env_.confine_policy(request.policy);
  request.stdout_pipe = out->handle();
  request.stderr_pipe = err->handle();
  exec_seen_ = false;
  if (phase == Phase::command && has_own_network()) {
    request.net_channel = true;
    for (const auto& consume : spec_.consumes)
      request.inside_listen_ports.push_back(consume.local_port);
    if (spec_.outbound) request.inside_listen_ports.push_back(spec_.egress_port);  // last
    request.on_listeners = [this](std::vector<int> fds) { forward_consumes(std::move(fds)); };
  }
  if (phase == Phase::command) {
    // Alive only once the command itself runs (for the lockbox: after the sandbox is built).
    request.on_exec = [this] {
      if (!process_) {
        exec_seen_ = true;  // reported from inside spawn(): handled below
        return;
      }
      if (phase_ == Phase::command && state_ == BlockState::starting) became_alive();
    };
  }
  auto process = env_.spawner->spawn(
      env_.loop, request, [this, phase](const ExitStatus& status) { on_exit(phase, status); });
  if (!process.ok()) {
    out->close();
    err->close();
    move(BlockEvent::setup_failed, process.error().message);
    return;
  }
  process_ = std::move(process).value();
  phase_ = phase;
  if (phase == Phase::init)
    emit("init", Json::object({{"status", "start"}}));
  else
    emit("start", Json::object({{"pid", process_->pid()}}));
  out->start_reading();
  err->start_reading();
  if (phase == Phase::command) {
    started_at_ = uv_now(env_.loop);
    if (exec_seen_) became_alive();
    exec_seen_ = false;
  }
}

void BlockRunner::on_exit(Phase phase, const ExitStatus& status) {
  for (OutputPipe* pipe : std::vector<OutputPipe*>(pipes_)) pipe->drain();
  if (phase == Phase::init && status.success() && state_ == BlockState::starting) {
    process_.reset();
    emit("init", Json::object({{"status", "done"}}));
    // Every step succeeded: only now is the init recorded as done (block_storage.h).
    if (Status recorded = record_init_done(spec_); !recorded.ok()) {
      ExitStatus failed;
      failed.setup_error = "init succeeded but could not be recorded: " + recorded.error().message;
      after_exit(failed);
      return;
    }
    spawn(Phase::command, spec_.command);
    return;
  }
  if (phase == Phase::init && state_ == BlockState::starting) {
    ExitStatus failed = status;
    if (failed.setup_error.empty())
      failed.setup_error = "init failed (" + describe(status) + ")" + last_lines(*logs_, 10);
    emit("init", Json::object({{"status", "failed"}, {"message", describe(status)}}));
    after_exit(failed);
    return;
  }
  after_exit(status);
}

void BlockRunner::after_exit(const ExitStatus& status) {
  if (status.outlived_kill)
    logs_->note("the sandbox had not ended " + std::to_string(kKillBackstopMs / 1000) +
                " s after the kill: its monitor was killed without waiting for it, and a "
                "process of the block may still run");
  ExitRecord record{status.exit_status, status.term_signal, wall_clock_ms(), describe(status)};
  if (int signum = lockbox_signal(status); signum != 0) {
    record.signal = signum;
    record.code = 0;
  }
  if (phase_ == Phase::command)
    emit("die", Json::object({{"exit_code", record.code},
                              {"signal", record.signal},
                              {"message", record.description}}));
  last_exit_ = std::move(record);
  uv_timer_stop(probe_timer_.get());
  uv_timer_stop(timer_.get());
  probe_.reset();
  consume_forwards_.clear();
  egress_.reset();
  if (process_) {
    (void)process_->kill_all();  // leftovers of the block die with it
    process_.reset();
  }
  phase_ = Phase::none;
  if (state_ == BlockState::stopping && stop_cause_ == StopCause::requested) {
    move(BlockEvent::exited_clean,
         killed_after_timeout_
             ? "killed: did not stop within " + std::to_string(spec_.stop_timeout.count()) + " ms"
             : "stopped");
    emit("stop", Json::object({{"message", reason_}}));
    start_if_deferred();
    return;
  }
  if (!status.setup_error.empty()) {
    // Sandbox setup and init failures do not heal by retrying: show them as they are.
    move(BlockEvent::setup_failed, status.setup_error);
    start_if_deferred();
    return;
  }
  bool unhealthy = stop_cause_ == StopCause::unhealthy;
  std::string what = describe(status);
  if (unhealthy) what = reason_ + "; " + what;
  if (cannot_run(status)) {
    // 126/127: the program is missing or not executable. Retrying cannot heal that.
    move(BlockEvent::exited_failed, cannot_run_message(status));
    start_if_deferred();
    return;
  }
  switch (decide_after_exit(spec_.restart, status.success(), unhealthy)) {
    case AfterExit::stop:
      move(BlockEvent::exited_clean, what);
      start_if_deferred();
      return;
    case AfterExit::fail:
      move(BlockEvent::exited_failed, what);
      start_if_deferred();
      return;
    case AfterExit::restart: break;
  }
  Milliseconds ran_for{static_cast<int64_t>(uv_now(env_.loop) - started_at_)};
  auto delay = backoff_.next(ran_for);
  if (!delay) {
    move(BlockEvent::exited_failed,
         "gave up after " + std::to_string(backoff_.restarts()) + " restarts; last: " + what);
    return;
  }
  restart_delay_ms_ = delay->count();
  move(BlockEvent::exited_restart, what + "; restart in " + std::to_string(delay->count()) + " ms");
  if (start_deferred_) {
    start_deferred_ = false;
    start();  // asked to start while it was stopping: now, not after the delay
    return;
  }
  arm_timer(*delay, [](BlockRunner& self) {
    if (!self.move(BlockEvent::backoff_elapsed)) return;
    self.emit("restart", Json::object({{"restarts", self.backoff_.restarts()},
                                       {"delay_ms", self.restart_delay_ms_}}));
    self.launch();
  });
}

int BlockRunner::lockbox_signal(const ExitStatus& status) const {
  return stackie::lockbox_signal(status, sandbox_kind());
}

// A block killed by its health check before it ever passed is most often one that boots slower
// than the check allows: say how long it ran and what to raise.
std::string BlockRunner::never_healthy_hint(Milliseconds ran, const std::string& detail) const {
  const HealthCheck& check = spec_.health;
  auto seconds = [](Milliseconds ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
    return std::string(text);
  };
  // Three times what it had, in whole seconds, and never below 10 s.
  int64_t suggest = std::max<int64_t>(10, (ran.count() * 3 + 999) / 1000);
  return "killed by its health check after running " + seconds(ran) + " without passing once (" +
         std::to_string(probe_failures_) + " failures, interval " + seconds(check.interval) +
         ", start_period " + seconds(check.start_period) + "; last: " + detail +
         "); if it needs longer to boot, raise health.start_period, e.g. "
         "start_period: " +
         std::to_string(suggest) + "s";
}

bool BlockRunner::cannot_run(const ExitStatus& status) const {
  if (status.term_signal != 0 || stop_cause_ == StopCause::unhealthy) return false;
  return status.exit_status == 126 || status.exit_status == 127;
}

// "command not found: ./serve.sh (block web, stackie-stack.yml:12:7)"
std::string BlockRunner::cannot_run_message(const ExitStatus& status) const {
  std::string what = status.exit_status == 127 ? "command not found" : "command not executable";
  std::string program = spec_.command_program;
  if (program.empty() && !spec_.command.empty()) program = spec_.command.front();
  std::string where = "block " + spec_.name;
  if (!spec_.command_where.empty()) where += ", " + spec_.command_where;
  return what + ": " + program + " (" + where + "; exit status " +
         std::to_string(status.exit_status) + ", not retried)";
}

std::string BlockRunner::describe(const ExitStatus& status) const {
  return describe_exit(status, sandbox_kind());
}

void BlockRunner::became_alive() {
  if (spec_.health.kind == HealthCheck::Kind::none) {
    // No check: running once it has stayed alive for its start_period.
    arm_timer(spec_.health.start_period, [](BlockRunner& self) {
      if (self.state_ == BlockState::starting) self.move(BlockEvent::ready);
    });
    return;
  }
  schedule_probe(Milliseconds{0});
}

void BlockRunner::arm_timer(Milliseconds delay, void (*fire)(BlockRunner&)) {
  timer_fire_ = fire;
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        auto* self = static_cast<BlockRunner*>(t->data);
        self->timer_fire_(*self);
      },
      static_cast<uint64_t>(delay.count()), 0);
}

void BlockRunner::schedule_probe(Milliseconds delay) {
  uv_timer_start(
      probe_timer_.get(), [](uv_timer_t* t) { static_cast<BlockRunner*>(t->data)->probe(); },
      static_cast<uint64_t>(delay.count()), 0);
}

void BlockRunner::probe() {
  if (!process_ || (state_ != BlockState::starting && state_ != BlockState::running)) return;
  ProbeTarget target;
  target.address = env_.port_address;
  if (has_own_network())
    target.socket_source = [this](SocketDone done) { inside_socket(std::move(done)); };
  if (spec_.health.kind == HealthCheck::Kind::exec) {
    // The check sees the block's environment (PATH with the block's programs first, ...).
    std::vector<std::string> names;
    for (const auto& [key, value] : spec_.policy.environment) {
      target.exec_env.push_back(key + "=" + value);
      names.push_back(key);
    }
    target.exec_argv = process_->join_argv(spec_.health.argv, names);
  }
  probe_ = run_probe(env_.loop, spec_.health, target,
                     [this](bool healthy, std::string detail) { probe_result(healthy, detail); });
}

void BlockRunner::probe_result(bool healthy, const std::string& detail) {
  if (state_ != BlockState::starting && state_ != BlockState::running) return;
  const HealthCheck& check = spec_.health;
  bool changed = !last_health_ || last_health_->ok != healthy;
  last_health_ = HealthRecord{healthy, wall_clock_ms(), detail};
  if (changed)
    emit("health_status", Json::object({{"status", healthy ? "healthy" : "unhealthy"},
                                        {"output", detail},
                                        {"failing_streak", healthy ? 0 : probe_failures_ + 1}}));
  if (healthy) {
    probe_failures_ = 0;
    if (state_ == BlockState::starting) move(BlockEvent::ready, "healthy (" + detail + ")");
    schedule_probe(check.interval);
    return;
  }
  Milliseconds age{static_cast<int64_t>(uv_now(env_.loop) - started_at_)};
  bool grace = state_ == BlockState::starting && age < check.start_period;
  if (!grace) ++probe_failures_;
  if (probe_failures_ < std::max(1, check.retries)) {
    schedule_probe(check.interval);
    return;
  }
  std::string why = "health check failed " + std::to_string(probe_failures_) + " times: " + detail;
  if (state_ == BlockState::starting) why = never_healthy_hint(age, detail);
  move(BlockEvent::unhealthy, why);
  stop_cause_ = StopCause::unhealthy;
  uv_timer_stop(probe_timer_.get());
  // Stop it as `down` would; the exit then goes to the restart policy.
  emit_kill(spec_.stop_signal, "unhealthy");
  (void)process_->signal(spec_.stop_signal);
  arm_timer(spec_.stop_timeout, [](BlockRunner& self) {
    self.logs_->note("did not stop within its stop_timeout: SIGKILL");
    if (!self.process_) return;
    self.emit_kill(SIGKILL, "stop_timeout");
    (void)self.process_->kill_all();
  });
}

Status BlockRunner::send_signal(int signum) {
  if (!process_ || phase_ != Phase::command)
    return Error{UV_ESRCH,
                 "block " + spec_.name + " is " + std::string(to_string(state_)) + ", not running"};
  return process_->signal(signum);
}

void BlockRunner::stop() {
  start_deferred_ = false;  // a later stop wins over an earlier start
  switch (state_) {
    case BlockState::created:
    case BlockState::backoff:
      uv_timer_stop(timer_.get());
      if (move(BlockEvent::stop, "stopped")) emit("stop", Json::object({{"message", reason_}}));
      return;
    case BlockState::starting:
    case BlockState::running: break;
    case BlockState::stopping:
      stop_cause_ = StopCause::requested;  // the exit now ends in `stopped`
      return;
    case BlockState::stopped:
    case BlockState::failed: return;
  }
  uv_timer_stop(probe_timer_.get());
  probe_.reset();
  move(BlockEvent::stop);
  stop_cause_ = StopCause::requested;
  if (!process_) return;
  if (phase_ == Phase::init) {
    emit_kill(SIGKILL, "stop");
    (void)process_->kill_all();  // an init script has nothing to shut down gracefully
    return;
  }
  emit_kill(spec_.stop_signal, "stop");
  if (auto sent = process_->signal(spec_.stop_signal); !sent.ok())
    logs_->note("stop signal: " + sent.error().message);
  arm_timer(spec_.stop_timeout, [](BlockRunner& self) {
    self.killed_after_timeout_ = true;
    self.logs_->note("did not stop within " + std::to_string(self.spec_.stop_timeout.count()) +
                     " ms: SIGKILL of the whole sandbox");
    if (!self.process_) return;
    self.emit_kill(SIGKILL, "stop_timeout");
    (void)self.process_->kill_all();
  });
}

void BlockRunner::emit_kill(int signum, std::string_view reason) const {
  emit("kill", Json::object({{"signal", signal_text(signum)}, {"reason", std::string(reason)}}));
}

Status BlockRunner::kill(int signum) {
  if (!process_)
    return Error{UV_ESRCH, "block " + spec_.name + " is " + std::string(to_string(state_)) +
                               ": no process to signal"};
  emit_kill(signum, "request");
  logs_->note("killed with " + signal_text(signum) + " on request");
  if (signum == SIGKILL) return process_->kill_all();
  return process_->signal(signum);
}

bool BlockRunner::has_own_network() const {
  return sandbox_kind() == SandboxKind::linux_namespaces &&
         spec_.policy.network == NetworkMode::localhost;
}

void BlockRunner::inside_socket(SocketDone done) {
  if (!process_ || phase_ != Phase::command)
    return done(Error{UV_ECONNREFUSED, "block '" + spec_.name + "' is not running"});
  process_->inside_socket(std::move(done));
}

// The lockbox made one listener per `consumes` entry inside the namespace, in spec order;
// each connection to one is relayed to its provider.
void BlockRunner::forward_consumes(std::vector<int> listeners) {
  consume_forwards_.clear();
  egress_.reset();
  if (spec_.outbound && listeners.size() == spec_.consumes.size() + 1) {
    auto proxy = EgressProxy::adopt(env_.loop, listeners.back(), spec_.egress_allow,
                                    [this](const std::string& line) { logs_->note(line); });
    listeners.pop_back();
    if (proxy.ok())
      egress_ = std::move(*proxy);
    else
      logs_->note(proxy.error().message);
  }
  for (size_t i = 0; i < listeners.size(); ++i) {
    if (i >= spec_.consumes.size() || !env_.consume_upstream) {
      ::close(listeners[i]);
      continue;
    }
    ConsumedPort consume = spec_.consumes[i];
    auto forward = PortForward::adopt(env_.loop, listeners[i],
                                      [this, consume] { return env_.consume_upstream(consume); });
    if (!forward.ok()) {
      logs_->note("consumes '" + consume.name + "': " + forward.error().message);
      continue;
    }
    consume_forwards_.push_back(std::move(*forward));
  }
}

std::vector<std::string> BlockRunner::join_argv(const std::vector<std::string>& command,
                                                const std::vector<std::string>& pass_env) const {
  if (!process_ || phase_ != Phase::command) return {};
  return process_->join_argv(command, pass_env);
}

}  // namespace stackie
