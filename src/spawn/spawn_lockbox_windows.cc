// The lockbox spawner on Windows (spawner.h): uv_spawn `stackie-lockbox.exe --policy-fd 3
// --error-fd 4 -- ARGV`, the monitor that plans the restricted token, makes the block's
// kill-on-close job, starts the block in it and relays its exit (src/lockbox_main_windows.cc).
//
// What differs from spawn_lockbox.cc (POSIX), and why a file of its own:
// - stdio 3 and 4 are pipes libuv creates (a child's C runtime finds them as fds 3 and 4); there
//   are no fds to inherit and no signals.
// - The daemon's death must kill every block, and nothing like a pid namespace does it. libuv
//   puts every process it spawns without UV_PROCESS_DETACHED into one kill-on-close job that
//   only the daemon holds (src/win/process.c, uv__init_global_job_handle): when the daemon dies,
//   however it dies, Windows closes that handle and kills the monitors; each monitor's own job
//   then kills its block's whole tree. That job lets the monitors' children break away silently,
//   so a block belongs to its monitor's job only. uv_spawn returns after the assignment, and
//   the monitor starts nothing before it has read the whole policy, which is written only
//   after uv_spawn returned: no block can exist outside it. (windows-spawner-wine kills a
//   daemon and checks its block's child is gone.) So the monitor must never be DETACHED.
// - No signals: a stop goes to the monitor as a byte on its stdio 5 (--stop-fd). 's' makes it
//   attach to the block's windowless console and send CTRL_BREAK to the block's process group
//   (only a process on that console can); 'k' makes it end the block's job. Either way the
//   monitor then revokes what it granted on the user's paths and exits. Terminating the monitor
//   itself is the backstop, when it has not exited kKillBackstopMs (10 s) after a 'k'.
#include <uv.h>
#include <windows.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <utility>

#include "base/fs_path.h"
#include "base/uv_handle.h"
#include "policy/resource_limits.h"
#include "sandbox/setup_error.h"
#include "spawn/setup_failure.h"
#include "spawn/spawn_process.h"
#include "spawn/spawner.h"

namespace stackie {

namespace {

using spawn_detail::ProcessCore;

constexpr int kPolicyFd = 3;
constexpr int kErrorFd = 4;
constexpr int kStopFd = 5;
constexpr size_t kMaxErrorReport = 64 * 1024;
constexpr int kSetupFailureStatus = 125;

// The error pipe (stdio 4), read on the loop. Once the block runs the monitor writes
// kBlockStartedLine and closes its end (on_exec); a failed start is one JSON line, then exit 125.
class ErrorPipe {
 public:
  static Result<ErrorPipe*> make(uv_loop_t* loop, std::function<void()> on_exec) {
    auto* self = new ErrorPipe();
    self->on_exec_ = std::move(on_exec);
    if (int rc = self->pipe_.init([loop](uv_pipe_t* h) { return uv_pipe_init(loop, h, 0); }, self);
        rc != 0) {
      delete self;
      return Error{rc, std::string("error pipe: ") + uv_strerror(rc)};
    }
    return self;
  }
  uv_pipe_t* pipe() const { return pipe_.get(); }
  void start_reading() {
    uv_read_start(
        pipe_.stream(),
        [](uv_handle_t*, size_t, uv_buf_t* buf) {
          static char scratch[4096];  // single-threaded loop; consumed before the next read
          *buf = uv_buf_init(scratch, sizeof scratch);
        },
        [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
          auto* self = static_cast<ErrorPipe*>(stream->data);
          if (n > 0) self->append(buf->base, static_cast<size_t>(n));
          if (n < 0) {
            uv_read_stop(stream);
            self->eof_ = true;
          }
          if (!self->complete()) return;
          if (self->started() && self->on_exec_) {
            auto exec_done = std::move(self->on_exec_);
            self->on_exec_ = nullptr;
            exec_done();
          }
          if (self->on_eof_) {
            auto eof_done = std::move(self->on_eof_);
            self->on_eof_ = nullptr;
            eof_done();  // may close this pipe
          }
        });
  }
  // Everything the monitor will say is in: the started line, a whole report line, or the end of
  // file. Not the end of file alone: a console host of the monitor's may hold the pipe's other
  // end open until the monitor exits (setup_error.h kBlockStartedLine).
  bool complete() const { return eof_ || (!report_.empty() && report_.back() == '\n'); }
  // The block runs: the monitor said so. An end of file without the line is a monitor that
  // died before the block ran (killed, crashed): its exit tells the rest.
  bool started() const { return report_ == kBlockStartedLine; }
  // Runs `done` once the whole report is in (at once if it is): the monitor's exit may be seen
  // before the last of its report is read, and the report must not be lost.
  void when_done(std::function<void()> done) {
    if (complete()) return done();
    on_eof_ = std::move(done);
  }
  // The monitor's setup-failure report; empty once the block started.
  std::string report() const { return started() ? std::string() : report_; }
  // Frees this object once libuv is done with the handle: call it once, then forget the pointer.
  void close() {
    on_exec_ = nullptr;
    on_eof_ = nullptr;
    pipe_.close([this] { delete this; });
  }

 private:
  void append(const char* data, size_t n) {
    if (report_.size() < kMaxErrorReport)
      report_.append(data, std::min(n, kMaxErrorReport - report_.size()));
  }
  UvHandle<uv_pipe_t> pipe_;
  std::string report_;
  bool eof_ = false;
  std::function<void()> on_exec_;
  std::function<void()> on_eof_;
};

// Writes the policy to the monitor's stdio 3, then closes the pipe (the monitor reads to EOF).
// Owns itself: freed when the pipe is closed.
class PolicyWriter {
 public:
  static Result<PolicyWriter*> make(uv_loop_t* loop, std::string json) {
    auto* self = new PolicyWriter();
    self->json_ = std::move(json);
    if (int rc = self->pipe_.init([loop](uv_pipe_t* h) { return uv_pipe_init(loop, h, 0); }, self);
        rc != 0) {
      delete self;
      return Error{rc, std::string("policy pipe: ") + uv_strerror(rc)};
    }
    return self;
  }
  uv_pipe_t* pipe() const { return pipe_.get(); }
  Status write() {
    uv_buf_t buf = uv_buf_init(json_.data(), static_cast<unsigned>(json_.size()));
    write_.data = this;
    int rc = uv_write(&write_, pipe_.stream(), &buf, 1,
                      [](uv_write_t* req, int) { static_cast<PolicyWriter*>(req->data)->close(); });
    if (rc != 0) {
      close();
      return Error{rc, std::string("write the policy: ") + uv_strerror(rc)};
    }
    return {};
  }
  void close() {
    pipe_.close([this] { delete this; });
  }

 private:
  UvHandle<uv_pipe_t> pipe_;
  std::string json_;
  uv_write_t write_{};
};

// The monitor's stdio 5 (--stop-fd), held open while the monitor runs: one byte a request.
class StopPipe {
 public:
  static Result<std::unique_ptr<StopPipe>> make(uv_loop_t* loop) {
    std::unique_ptr<StopPipe> self(new StopPipe());
    if (int rc =
            self->pipe_.init([loop](uv_pipe_t* h) { return uv_pipe_init(loop, h, 0); }, self.get());
        rc != 0)
      return Error{rc, std::string("stop pipe: ") + uv_strerror(rc)};
    return self;
  }
  uv_pipe_t* pipe() const { return pipe_.get(); }
  // 's' (stop) or 'k' (kill). The byte is a constant, so the write needs no buffer of its own.
  Status send(const char& byte) {
    auto* request = new uv_write_t;
    uv_buf_t buf = uv_buf_init(const_cast<char*>(&byte), 1);
    int rc = uv_write(request, pipe_.stream(), &buf, 1, [](uv_write_t* done, int) { delete done; });
    if (rc != 0) {
      delete request;
      return Error{rc, std::string("write to the monitor's stop pipe: ") + uv_strerror(rc)};
    }
    return {};
  }

 private:
  StopPipe() = default;
  UvHandle<uv_pipe_t> pipe_;
};

constexpr char kStopByte = 's';
constexpr char kKillByte = 'k';

class WindowsLockboxProcess final : public Process {
 public:
  WindowsLockboxProcess(uv_loop_t* loop, std::string lockbox, ProcessCore* core,
                        ErrorPipe* error_pipe, std::unique_ptr<StopPipe> stop_pipe,
                        SandboxPolicy policy)
      : loop_(loop),
        lockbox_(std::move(lockbox)),
        core_(core),
        error_pipe_(error_pipe),
        stop_pipe_(std::move(stop_pipe)),
        policy_(std::move(policy)) {}
  ~WindowsLockboxProcess() override {
    if (error_pipe_ != nullptr) error_pipe_->close();
    int pid = core_->pid();
    core_->orphan([pid] { uv_kill(pid, SIGKILL); });
  }
  int pid() const override { return core_->pid(); }
  bool running() const override { return core_->running(); }
  // Any signal but SIGKILL is a stop request: CTRL_BREAK to the block (Windows has no other
  // signal a console program can catch).
  Status signal(int signum) override {
    if (signum == SIGKILL) return kill_all();
    if (!core_->running()) return {};
    return stop_pipe_->send(kStopByte);
  }
  // The monitor ends the block's job and revokes its grants; if it has not exited
  // kKillBackstopMs later, it is terminated (its job then still kills the block's tree).
  Status kill_all() override {
    if (!core_->running()) return {};
    if (stop_pipe_->send(kKillByte).ok() && arm_backstop()) return {};
    return terminate_monitor();
  }
  // No --join on Windows (a running block's token cannot be borrowed): the command gets a
  // monitor and job of its own, with a token planned from the same policy.
  std::vector<std::string> join_argv(const std::vector<std::string>& command,
                                     const std::vector<std::string>& pass_env) const override {
    if (!running()) return {};
    // --exit-with: the command's monitor ends the command's job when the block's monitor exits,
    // so what `exec` started does not outlive `down` (the CLI, not the daemon, runs it).
    std::vector<std::string> argv{
        lockbox_,     "--exit-with", std::to_string(core_->pid()),           "--name",
        policy_.name, "--net",       std::string(to_string(policy_.network))};
    if (!policy_.system_view) argv.emplace_back("--no-system-view");
    for (const auto& bind : policy_.read_only) argv.insert(argv.end(), {"--ro", bind.source});
    for (const auto& bind : policy_.read_write) argv.insert(argv.end(), {"--rw", bind.source});
    if (!policy_.host_tmp_dir.empty()) argv.insert(argv.end(), {"--tmpdir", policy_.host_tmp_dir});
    if (!policy_.working_dir.empty()) argv.insert(argv.end(), {"--chdir", policy_.working_dir});
    // The command's job gets the block's limits: an exec'd command must not escape them.
    if (policy_.limits.memory_bytes != 0)
      argv.insert(argv.end(), {"--memory", std::to_string(policy_.limits.memory_bytes)});
    if (policy_.limits.pids > 0)
      argv.insert(argv.end(), {"--pids", std::to_string(policy_.limits.pids)});
    if (policy_.limits.cpu_millis > 0)
      argv.insert(argv.end(), {"--cpus", format_cpu_millis(policy_.limits.cpu_millis)});
    for (const auto& name : pass_env) argv.insert(argv.end(), {"--pass-env", name});
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  // Runs `done` once the whole error report is in (see ErrorPipe::when_done).
  void when_report_read(std::function<void()> done) {
    if (error_pipe_ == nullptr) return done();
    error_pipe_->when_done(std::move(done));
  }
  std::string take_report() {
    if (error_pipe_ == nullptr) return {};
    std::string report = error_pipe_->report();
    error_pipe_->close();
    error_pipe_ = nullptr;
    return report;
  }

 private:
  Status terminate_monitor() {
    if (!core_->running()) return {};
    if (int rc = uv_kill(core_->pid(), SIGKILL); rc != 0 && rc != UV_ESRCH)
      return Error{rc,
                   "terminate monitor " + std::to_string(core_->pid()) + ": " + uv_strerror(rc)};
    return {};
  }
  bool arm_backstop() {
    if (!backstop_.get() &&
        backstop_.init([this](uv_timer_t* h) { return uv_timer_init(loop_, h); }, this) != 0)
      return false;
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(backstop_.get()))) return true;
    return uv_timer_start(
               backstop_.get(),
               [](uv_timer_t* timer) {
                 (void)static_cast<WindowsLockboxProcess*>(timer->data)->terminate_monitor();
               },
               kKillBackstopMs, 0) == 0;
  }

  uv_loop_t* loop_;
  std::string lockbox_;
  ProcessCore* core_;
  ErrorPipe* error_pipe_;
  std::unique_ptr<StopPipe> stop_pipe_;
  UvHandle<uv_timer_t> backstop_;
  SandboxPolicy policy_;
};

class WindowsLockboxSpawner final : public Spawner {
 public:
  explicit WindowsLockboxSpawner(std::string lockbox) : lockbox_(std::move(lockbox)) {}
  SandboxKind kind() const override { return SandboxKind::restricted_token; }
  std::string limits_enforcement() const override {
    return "job object (memory and process count from limits:)";
  }

  Result<std::unique_ptr<Process>> spawn(uv_loop_t* loop, const SpawnRequest& request,
                                         ExitCallback on_exit) override {
    STACKIE_TRY(validate(request.policy));
    if (request.net_channel)
      return Error{UV_ENOTSUP, "no network namespace on Windows: blocks use host ports"};
    STACKIE_TRY_ASSIGN(policy, PolicyWriter::make(loop, policy_to_json(request.policy)));
    auto errors = ErrorPipe::make(loop, request.on_exec);
    if (!errors.ok()) {
      policy->close();
      return errors.take_error();
    }
    ErrorPipe* error_pipe = *errors;
    auto stop_pipe = StopPipe::make(loop);
    if (!stop_pipe.ok()) {
      policy->close();
      error_pipe->close();
      return stop_pipe.take_error();
    }

    spawn_detail::SpawnPlan plan;
    plan.argv = {lockbox_,
                 "--policy-fd",
                 std::to_string(kPolicyFd),
                 "--error-fd",
                 std::to_string(kErrorFd),
                 "--stop-fd",
                 std::to_string(kStopFd),
                 "--"};
    plan.argv.insert(plan.argv.end(), request.argv.begin(), request.argv.end());
    // The daemon usually has no console (started detached, or at logon): each monitor would get
    // a console window of its own on the user's desktop. libuv sets CREATE_NO_WINDOW only when
    // no stdio slot is UV_INHERIT_FD: this plan has pipes only (no extra_fds).
    plan.no_console_window = true;
    plan.extra_pipes = {
        {policy->pipe(), true}, {error_pipe->pipe(), false}, {(*stop_pipe)->pipe(), true}};
    static_assert(kPolicyFd == 3 && kErrorFd == 4 && kStopFd == 5, "extra pipes start at 3");

    auto slot = std::make_shared<WindowsLockboxProcess*>(nullptr);
    auto core = ProcessCore::start(loop, plan, request.stdout_pipe, request.stderr_pipe,
                                   [slot, on_exit](int64_t status, int signum) {
                                     WindowsLockboxProcess* process = *slot;
                                     process->when_report_read([process, on_exit, status, signum] {
                                       ExitStatus exit;
                                       exit.exit_status = status;
                                       exit.term_signal = signum;
                                       std::string report = process->take_report();
                                       if (status == kSetupFailureStatus && signum == 0)
                                         exit.setup_error = describe_setup_failure(report);
                                       on_exit(exit);
                                     });
                                   });
    if (!core.ok()) {
      policy->close();
      error_pipe->close();
      return core.take_error();
    }
    auto process = std::make_unique<WindowsLockboxProcess>(loop, lockbox_, *core, error_pipe,
                                                           std::move(*stop_pipe), request.policy);
    *slot = process.get();
    error_pipe->start_reading();
    if (auto written = policy->write(); !written.ok()) return written.error();
    return std::unique_ptr<Process>(std::move(process));
  }

 private:
  std::string lockbox_;
};

bool is_executable_file(const std::string& path) {
  DWORD attributes = GetFileAttributesA(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

}  // namespace

std::unique_ptr<Spawner> make_lockbox_spawner(std::string lockbox_path,
                                              std::unique_ptr<CgroupTree> cgroups, std::string,
                                              bool) {
  (void)cgroups;  // no cgroups on Windows: the monitor's job holds the limits
  return std::make_unique<WindowsLockboxSpawner>(std::move(lockbox_path));
}

DelegatedCgroups take_delegated_cgroups() {
  return {nullptr, "Windows has no cgroups: each block's job object holds its limits"};
}

SandboxKind native_sandbox_kind() {
  return SandboxKind::restricted_token;
}

Result<std::string> find_lockbox() {
  if (const char* env = std::getenv("STACKIE_LOCKBOX"); env != nullptr && *env != '\0') {
    if (!is_executable_file(env))
      return Error{UV_ENOENT, std::string("$STACKIE_LOCKBOX ") + env + ": no such file"};
    return std::string(env);
  }
  char self[32768];
  size_t size = sizeof self;
  if (uv_exepath(self, &size) == 0) {
    std::string dir(self, size);
    if (size_t slash = dir.find_last_of("\\/"); slash != std::string::npos) {
      std::string candidate = dir.substr(0, slash + 1) + "stackie-lockbox.exe";
      if (is_executable_file(candidate)) return candidate;
    }
  }
  std::string relocated = relocated_install_dir(STACKIE_INSTALL_LIBEXECDIR "/stackie");
  if (!relocated.empty()) {
    std::string candidate = relocated + "/stackie-lockbox.exe";
    if (is_executable_file(candidate)) return candidate;
  }
  return Error{UV_ENOENT, "stackie-lockbox.exe not found ($STACKIE_LOCKBOX, next to stackied.exe)"};
}

}  // namespace stackie
