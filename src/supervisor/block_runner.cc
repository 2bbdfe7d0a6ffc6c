#include "supervisor/block_runner.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "base/signal_name.h"
#include "supervisor/block_storage.h"
#include "supervisor/init_script.h"

namespace stackie {

// One of a process's output pipes. It reads until EOF even after the process is gone (data
// may still be buffered), then frees itself; its BlockRunner can also close it early.
class OutputPipe {
 public:
  static OutputPipe* create(uv_loop_t* loop, BlockRunner* owner, std::shared_ptr<BlockLogs> logs,
                            LogStream stream, std::vector<OutputPipe*>* registry) {
    auto* pipe = new OutputPipe(std::move(logs), stream, registry);
    (void)owner;
    uv_pipe_init(loop, &pipe->pipe_, 0);
    pipe->pipe_.data = pipe;
    uv_idle_init(loop, &pipe->next_turn_);
    pipe->next_turn_.data = pipe;
    registry->push_back(pipe);
    return pipe;
  }
  uv_pipe_t* handle() { return &pipe_; }

  void start_reading() {
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&pipe_),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* self = static_cast<OutputPipe*>(h->data);
          *buf = uv_buf_init(self->buffer_, sizeof self->buffer_);
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* self = static_cast<OutputPipe*>(s->data);
          if (n > 0) {
            self->logs_->feed(self->stream_, std::string_view(buf->base, size_t(n)));
            self->yield_turn();
          }
          if (n < 0) self->close();  // EOF or error: the last writer is gone
        });
  }

  // One buffer per pipe per loop turn: libuv would read a busy pipe up to 32 times in a row,
  // and a block flooding its output (2 MiB of lines to split, log and offer to followers) would
  // then keep clients and health checks waiting for a whole turn (issue 10: ps within 100 ms
  // during a flood). Reading resumes at the next turn, after the other ready handles ran.
  void yield_turn() {
    if (closed_) return;
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&pipe_));
    uv_idle_start(&next_turn_, [](uv_idle_t* idle) {
      auto* self = static_cast<OutputPipe*>(idle->data);
      uv_idle_stop(idle);
      if (!self->closed_) self->start_reading();
    });
  }

  // Take what is buffered in the pipe now (the process just exited): its last words belong in
  // the failure reason.
  void drain() {
    uv_os_fd_t fd;
    if (closed_ || uv_fileno(reinterpret_cast<uv_handle_t*>(&pipe_), &fd) != 0) return;
    for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: a grandchild may keep writing
      ssize_t n = ::read(fd, buffer_, sizeof buffer_);
      if (n <= 0) break;
      logs_->feed(stream_, std::string_view(buffer_, static_cast<size_t>(n)));
    }
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    logs_->end_of_stream(stream_);
    if (registry_ != nullptr) std::erase(*registry_, this);
    registry_ = nullptr;
    auto closed = [](uv_handle_t* h) {
      auto* self = static_cast<OutputPipe*>(h->data);
      if (--self->open_handles_ == 0) delete self;
    };
    uv_close(reinterpret_cast<uv_handle_t*>(&next_turn_), closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&pipe_), closed);
  }

 private:
  OutputPipe(std::shared_ptr<BlockLogs> logs, LogStream stream, std::vector<OutputPipe*>* registry)
      : logs_(std::move(logs)), stream_(stream), registry_(registry) {}
  uv_pipe_t pipe_{};
  uv_idle_t next_turn_{};
  int open_handles_ = 2;  // pipe_ and next_turn_: freed once both are closed
  std::shared_ptr<BlockLogs> logs_;
  LogStream stream_;
  std::vector<OutputPipe*>* registry_;
  bool closed_ = false;
  char buffer_[64 * 1024];
};

namespace {

uv_timer_t* new_timer(uv_loop_t* loop, void* data) {
  auto* timer = new uv_timer_t;
  uv_timer_init(loop, timer);
  timer->data = data;
  return timer;
}

void close_timer(uv_timer_t* timer) {
  uv_timer_stop(timer);
  uv_close(reinterpret_cast<uv_handle_t*>(timer),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
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
  probe_.reset();
  consume_forwards_.clear();
  close_timer(timer_);
  close_timer(probe_timer_);
  process_.reset();  // SIGKILL of the whole sandbox if still running
  close_pipes();
}

void BlockRunner::close_pipes() {
  while (!pipes_.empty()) pipes_.back()->close();
}

bool BlockRunner::move(BlockEvent event, std::string reason) {
  auto next = next_state(state_, event);
  if (!next) return false;
  state_ = *next;
  if (!reason.empty()) reason_ = std::move(reason);
  if (state_ == BlockState::starting || state_ == BlockState::running) {
    if (event == BlockEvent::start) reason_.clear();
  }
  logs_->note(std::string(to_string(state_)) + (reason_.empty() ? "" : ": " + reason_));
  if (env_.on_change) env_.on_change();
  return true;
}

void BlockRunner::start() {
  if (state_ == BlockState::backoff) uv_timer_stop(timer_);
  if (move(BlockEvent::start)) launch();
}

void BlockRunner::launch() {
  stop_requested_ = false;
  forced_failure_ = false;
  killed_after_timeout_ = false;
  probe_failures_ = 0;
  ready_seen_ = false;
  // The loader never touches the disk: volumes, temp and runtime dirs are made here, just
  // before the sandbox is, so a fresh volume starts empty (and init runs on it).
  if (Status created = prepare_block_storage(spec_.policy, logs_->directory()); !created.ok()) {
    move(BlockEvent::setup_failed, created.error().message);
    return;
  }
  if (!spec_.init.empty())
    spawn(Phase::init, init_argv(spec_.init));
  else
    spawn(Phase::command, spec_.command);
}

void BlockRunner::spawn(Phase phase, const std::vector<std::string>& argv) {
  OutputPipe* out = OutputPipe::create(env_.loop, this, logs_, LogStream::out, &pipes_);
  OutputPipe* err = OutputPipe::create(env_.loop, this, logs_, LogStream::err, &pipes_);
  SpawnRequest request;
  request.argv = argv;
  request.policy = spec_.policy;
  request.stdout_pipe = out->handle();
  request.stderr_pipe = err->handle();
  exec_seen_ = false;
  if (phase == Phase::command && has_own_network()) {
    request.net_channel = true;
    for (const auto& consume : spec_.consumes)
      request.inside_listen_ports.push_back(consume.local_port);
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
    spawn(Phase::command, spec_.command);
    return;
  }
  if (phase == Phase::init && state_ == BlockState::starting) {
    ExitStatus failed = status;
    if (failed.setup_error.empty())
      failed.setup_error = "init failed (" + describe(status) + ")" + last_lines(*logs_, 10);
    after_exit(failed);
    return;
  }
  after_exit(status);
}

void BlockRunner::after_exit(const ExitStatus& status) {
  ExitRecord record{status.exit_status, status.term_signal, wall_clock_ms(), describe(status)};
  if (int signum = lockbox_signal(status); signum != 0) {
    record.signal = signum;
    record.code = 0;
  }
  last_exit_ = std::move(record);
  uv_timer_stop(probe_timer_);
  uv_timer_stop(timer_);
  probe_.reset();
  consume_forwards_.clear();
  if (process_) {
    (void)process_->kill_all();  // leftovers of the block die with it
    process_.reset();
  }
  phase_ = Phase::none;
  if (state_ == BlockState::stopping && stop_requested_) {
    move(BlockEvent::exited_clean,
         killed_after_timeout_
             ? "killed: did not stop within " + std::to_string(spec_.stop_timeout.count()) + " ms"
             : "stopped");
    return;
  }
  if (!status.setup_error.empty()) {
    // Sandbox setup and init failures do not heal by retrying: show them as they are.
    move(BlockEvent::setup_failed, status.setup_error);
    if (state_ == BlockState::stopping) move(BlockEvent::exited_failed, status.setup_error);
    return;
  }
  std::string what = describe(status);
  if (forced_failure_) what = reason_ + "; " + what;
  switch (decide_after_exit(spec_.restart, status.success(), forced_failure_)) {
    case AfterExit::stop: move(BlockEvent::exited_clean, what); return;
    case AfterExit::fail: move(BlockEvent::exited_failed, what); return;
    case AfterExit::restart: break;
  }
  Milliseconds ran_for{static_cast<int64_t>(uv_now(env_.loop) - started_at_)};
  auto delay = backoff_.next(ran_for);
  if (!delay) {
    move(BlockEvent::exited_failed,
         "gave up after " + std::to_string(backoff_.restarts()) + " restarts; last: " + what);
    return;
  }
  move(BlockEvent::exited_restart, what + "; restart in " + std::to_string(delay->count()) + " ms");
  arm_timer(*delay, [](BlockRunner& self) {
    if (self.move(BlockEvent::backoff_elapsed)) self.launch();
  });
}

int BlockRunner::lockbox_signal(const ExitStatus& status) const {
  // stackie-lockbox reports the block's death by signal N as 128+N, and 126/127 for exec.
  int64_t code = status.exit_status;
  if (status.term_signal != 0 || sandbox_kind() == SandboxKind::passthrough) return 0;
  return code > 128 && code < 128 + 65 ? static_cast<int>(code - 128) : 0;
}

std::string BlockRunner::describe(const ExitStatus& status) const {
  if (!status.setup_error.empty()) return status.setup_error;
  if (status.term_signal != 0) return "killed by " + signal_name(status.term_signal);
  int64_t code = status.exit_status;
  if (int signum = lockbox_signal(status); signum != 0) return "killed by " + signal_name(signum);
  if (code == 126) return "exit status 126: command not executable";
  if (code == 127) return "exit status 127: command not found";
  return "exit status " + std::to_string(code);
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
      timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<BlockRunner*>(t->data);
        self->timer_fire_(*self);
      },
      static_cast<uint64_t>(delay.count()), 0);
}

void BlockRunner::schedule_probe(Milliseconds delay) {
  uv_timer_start(
      probe_timer_, [](uv_timer_t* t) { static_cast<BlockRunner*>(t->data)->probe(); },
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
  last_health_ = HealthRecord{healthy, wall_clock_ms(), detail};
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
  forced_failure_ = true;
  std::string why = "health check failed " + std::to_string(probe_failures_) + " times: " + detail;
  move(BlockEvent::unhealthy, why);
  uv_timer_stop(probe_timer_);
  // Stop it as `down` would; the exit then goes to the restart policy.
  (void)process_->signal(spec_.stop_signal);
  arm_timer(spec_.stop_timeout, [](BlockRunner& self) {
    self.logs_->note("did not stop within its stop_timeout: SIGKILL");
    if (self.process_) (void)self.process_->kill_all();
  });
}

void BlockRunner::stop() {
  stop_requested_ = true;
  switch (state_) {
    case BlockState::created:
    case BlockState::backoff:
      uv_timer_stop(timer_);
      move(BlockEvent::stop, "stopped");
      return;
    case BlockState::starting:
    case BlockState::running: break;
    case BlockState::stopping: return;  // already on its way; the exit ends in `stopped` now
    case BlockState::stopped:
    case BlockState::failed: return;
  }
  uv_timer_stop(probe_timer_);
  probe_.reset();
  move(BlockEvent::stop);
  if (!process_) return;
  if (phase_ == Phase::init) {
    (void)process_->kill_all();  // an init script has nothing to shut down gracefully
    return;
  }
  if (auto sent = process_->signal(spec_.stop_signal); !sent.ok())
    logs_->note("stop signal: " + sent.error().message);
  arm_timer(spec_.stop_timeout, [](BlockRunner& self) {
    self.killed_after_timeout_ = true;
    self.logs_->note("did not stop within " + std::to_string(self.spec_.stop_timeout.count()) +
                     " ms: SIGKILL of the whole sandbox");
    if (self.process_) (void)self.process_->kill_all();
  });
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

std::vector<std::string> BlockRunner::join_argv(const std::vector<std::string>& command) const {
  if (!process_ || phase_ != Phase::command) return {};
  return process_->join_argv(command, {});
}

}  // namespace stackie
