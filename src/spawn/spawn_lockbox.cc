// The lockbox spawner: uv_spawn `stackie-lockbox`, which builds the sandbox and execs the block
// (DESIGN.md §1, §5). The daemon runs no sandbox code between fork and exec. The policy goes in
// as JSON on an inherited pipe (fd 3, read until EOF: zero disk I/O); a setup failure comes back
// as one JSON line {"step","errno","message"} on the error pipe (fd 4) with exit status 125,
// and becomes the block's failure reason verbatim.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <string>
#include <utility>

#include "base/fs_path.h"
#include "base/uv_handle.h"
#include "sandbox/zygote_protocol.h"
#include "spawn/lockbox_os.h"
#include "spawn/net_channel.h"
#include "spawn/setup_failure.h"
#include "spawn/spawn_process.h"
#include "spawn/spawner.h"
#include "spawn/zygote_client.h"

namespace stackie {

namespace {

using spawn_detail::ChildProcess;
using spawn_detail::ProcessCore;
using spawn_detail::Zygote;

constexpr int kPolicyFd = 3;
constexpr int kErrorFd = 4;
constexpr int kNetFd = 5;       // Linux, `network: localhost`
constexpr int kLifelineFd = 5;  // macOS (lockbox_os.h): never together with a net fd
constexpr size_t kMaxErrorReport = 64 * 1024;
constexpr int kSetupFailureStatus = 125;
#ifdef SIGPWR
// A monitor's tree kill (sandbox/linux_launch.h kTreeKillSignal): it kills the block's whole
// tree and exits once it is gone. A SIGKILL would leave a landlock block's orphans behind (no
// pid namespace), and a namespace monitor reported gone while its pid namespace still dies.
constexpr int kTreeKillSignal = SIGPWR;
#else
constexpr int kTreeKillSignal = SIGKILL;
#endif

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& other) noexcept : fd(other.fd) { other.fd = -1; }
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd = std::exchange(other.fd, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// Reads the error pipe on the loop; whatever is left when the lockbox exits is drained then.
class ErrorPipe {
 public:
  static Result<ErrorPipe*> open(uv_loop_t* loop, int fd, std::function<void()> on_exec) {
    auto* self = new ErrorPipe();
    self->on_exec_ = std::move(on_exec);
    self->pipe_.init([loop](uv_pipe_t* h) { return uv_pipe_init(loop, h, 0); }, self);
    if (int rc = uv_pipe_open(self->pipe_.get(), fd); rc != 0) {
      ::close(fd);
      self->close();
      return Error{rc, std::string("error pipe: ") + uv_strerror(rc)};
    }
    uv_read_start(
        self->pipe_.stream(),
        [](uv_handle_t*, size_t, uv_buf_t* buf) {
          static char scratch[4096];  // single-threaded loop; consumed before the next read
          *buf = uv_buf_init(scratch, sizeof scratch);
        },
        [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
          auto* pipe = static_cast<ErrorPipe*>(stream->data);
          if (n > 0) pipe->append(buf->base, static_cast<size_t>(n));
          if (n < 0) {
            // EOF without a report: the lockbox exec'd the block (its error fd is close-on-
            // exec). With a report, the exit (status 125) tells the rest.
            uv_read_stop(stream);
            if (pipe->report_.empty() && pipe->on_exec_) {
              auto exec_done = std::move(pipe->on_exec_);
              pipe->on_exec_ = nullptr;
              exec_done();
            }
          }
        });
    return self;
  }
  // The process exited: collect what is still buffered, then free the handle.
  std::string finish() {
    on_exec_ = nullptr;
    uv_os_fd_t fd;
    if (uv_fileno(pipe_.handle(), &fd) == 0) {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof buf)) > 0) append(buf, static_cast<size_t>(n));
    }
    close();
    return std::move(report_);
  }
  // Frees this object once libuv is done with the handle: call it once, then forget the pointer.
  void close() {
    on_exec_ = nullptr;
    pipe_.close([this] { delete this; });
  }

 private:
  void append(const char* data, size_t n) {
    if (report_.size() < kMaxErrorReport)
      report_.append(data, std::min(n, kMaxErrorReport - report_.size()));
  }
  UvHandle<uv_pipe_t> pipe_;
  std::string report_;
  std::function<void()> on_exec_;
};

class LockboxProcess final : public Process {
 public:
  LockboxProcess(uv_loop_t* loop, std::string lockbox, ChildProcess* core, ErrorPipe* error_pipe,
                 spawn_detail::NetChannel* net, std::shared_ptr<BlockCgroup> cgroup, Fd lifeline,
                 SandboxPolicy policy)
      : loop_(loop),
        lockbox_(std::move(lockbox)),
        core_(core),
        error_pipe_(error_pipe),
        net_(net),
        cgroup_(std::move(cgroup)),
        lifeline_(std::move(lifeline)),
        policy_(std::move(policy)) {}
  ~LockboxProcess() override {
    if (error_pipe_ != nullptr) error_pipe_->close();
    if (net_ != nullptr) net_->close();
    // macOS: closing the lifeline is the monitor's order to kill the block's processes.
    lifeline_.reset();
    core_->orphan([core = core_, cgroup = cgroup_] {
      if (cgroup) (void)cgroup->kill_all();
      (void)core->send_signal(kTreeKillSignal);
    });
  }
  std::optional<CgroupUsage> usage() const override {
    if (!cgroup_) return std::nullopt;
    auto usage = cgroup_->usage();
    if (!usage.ok()) return std::nullopt;
    return *usage;
  }
  int pid() const override { return core_->pid(); }
  bool running() const override { return core_->running(); }
  // Given to --join --name: the lockbox refuses a sandbox of another name (a recycled pid).
  void set_sandbox_id(std::string id) { sandbox_id_ = std::move(id); }
  // The monitor forwards TERM/INT/HUP/QUIT/USR1/USR2 to the block.
  Status signal(int signum) override { return send(signum); }
  // The tree kill signal: a namespace monitor SIGKILLs pid 1, and the pid namespace goes with
  // it; a landlock monitor kills the block's tree itself. Either exits once all is gone, and
  // its exit is reported as the block's. The block's cgroup is killed (which would take the
  // monitor too, before its sandbox is gone) only in the exit callback, where it also reaches a
  // process that was on its way into the sandbox. A monitor that has not exited
  // kKillBackstopMs later (a process of the block stuck in the kernel, say) is SIGKILLed.
  // macOS: a byte on the lifeline makes the monitor kill every process of the block, then exit
  // (128+9) once the block is reaped; the same backstop.
  Status kill_all() override {
    if (lifeline_.fd >= 0) {
      if (!core_->running()) return {};
      const char kill_byte = 'k';
      if (::write(lifeline_.fd, &kill_byte, 1) != 1) return send(SIGKILL);  // monitor gone
      arm_backstop();
      return {};
    }
    if (!core_->running()) return {};
    STACKIE_TRY(send(kTreeKillSignal));
    arm_backstop();
    return {};
  }
  std::vector<std::string> join_argv(const std::vector<std::string>& command,
                                     const std::vector<std::string>& pass_env) const override {
    if (!running()) return {};
    if (lifeline_.fd >= 0) return seatbelt_argv(command, pass_env);
    std::vector<std::string> argv{lockbox_, "--join", std::to_string(pid())};
    if (!sandbox_id_.empty()) argv.insert(argv.end(), {"--name", sandbox_id_});
    for (const auto& name : pass_env) {
      argv.emplace_back("--pass-env");
      argv.push_back(name);
    }
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  void inside_socket(SocketDone done) override {
    if (net_ == nullptr) return Process::inside_socket(std::move(done));
    if (!core_->running()) return done(Error{UV_ECONNREFUSED, "the block is not running"});
    net_->request_socket(std::move(done));
  }
  // Seatbelt cannot add a process to a running sandbox: the command gets a sandbox of its own
  // from the same policy (its environment aside, which the caller passes by name).
  std::vector<std::string> seatbelt_argv(const std::vector<std::string>& command,
                                         const std::vector<std::string>& pass_env) const {
    std::vector<std::string> argv{lockbox_, "--name", policy_.name, "--net",
                                  std::string(to_string(policy_.network))};
    if (!policy_.system_view) argv.emplace_back("--no-system-view");
    for (const auto& bind : policy_.read_only) argv.insert(argv.end(), {"--ro", bind.source});
    for (const auto& bind : policy_.read_write) argv.insert(argv.end(), {"--rw", bind.source});
    if (!policy_.host_tmp_dir.empty()) argv.insert(argv.end(), {"--tmpdir", policy_.host_tmp_dir});
    if (!policy_.working_dir.empty()) argv.insert(argv.end(), {"--chdir", policy_.working_dir});
    // An exec may connect to what the block serves and consumes (pg_isready, psql).
    for (int port : policy_.tcp_bind)
      argv.insert(argv.end(), {"--allow-connect", std::to_string(port)});
    for (int port : policy_.tcp_connect)
      argv.insert(argv.end(), {"--allow-connect", std::to_string(port)});
    for (const auto& name : pass_env) argv.insert(argv.end(), {"--pass-env", name});
    argv.emplace_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  bool backstop_fired() const { return backstop_fired_; }
  std::string take_report() {
    std::string report = error_pipe_ ? error_pipe_->finish() : std::string();
    error_pipe_ = nullptr;
    return report;
  }

 private:
  Status send(int signum) {
    const int sent = core_->send_signal(signum);
    if (sent < 0 && sent != -ESRCH) return system_error(-sent, "kill " + std::to_string(pid()));
    return {};
  }
  void arm_backstop() {
    if (!backstop_.get() &&
        backstop_.init([this](uv_timer_t* h) { return uv_timer_init(loop_, h); }, this) != 0)
      return;
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(backstop_.get()))) return;
    uv_timer_start(
        backstop_.get(),
        [](uv_timer_t* timer) {
          auto* self = static_cast<LockboxProcess*>(timer->data);
          self->backstop_fired_ = true;
          if (self->cgroup_) (void)self->cgroup_->kill_all();
          (void)self->send(SIGKILL);
        },
        kKillBackstopMs, 0);
  }
  uv_loop_t* loop_;
  std::string lockbox_;
  std::string sandbox_id_;
  ChildProcess* core_;
  ErrorPipe* error_pipe_;
  spawn_detail::NetChannel* net_;
  std::shared_ptr<BlockCgroup> cgroup_;
  Fd lifeline_;  // macOS only (lockbox_os.h)
  SandboxPolicy policy_;
  UvHandle<uv_timer_t> backstop_;  // kill_all's: see there
  bool backstop_fired_ = false;
};

// The policy is written whole before the spawn, so the channel must hold it (lockbox_os.h).
Result<Fd> policy_pipe(const std::string& json) {
  STACKIE_TRY_ASSIGN(fds, spawn_detail::policy_channel(json.size()));
  Fd read_end(fds.first), write_end(fds.second);
  size_t done = 0;
  while (done < json.size()) {
    ssize_t n = ::write(write_end.fd, json.data() + done, json.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(errno, "write policy");
    done += static_cast<size_t>(n);
  }
  return read_end;  // write end closed here: the lockbox reads until EOF
}

Result<std::pair<Fd, Fd>> fd_pair(Result<std::pair<int, int>> fds) {
  if (!fds.ok()) return fds.take_error();
  return std::pair<Fd, Fd>(Fd(fds->first), Fd(fds->second));
}

class LockboxSpawner final : public Spawner {
 public:
  LockboxSpawner(std::string lockbox, std::unique_ptr<CgroupTree> cgroups,
                 std::string no_cgroup_reason, bool landlock)
      : lockbox_(std::move(lockbox)),
        cgroups_(std::move(cgroups)),
        no_cgroup_reason_(std::move(no_cgroup_reason)),
        landlock_(landlock) {}
  SandboxKind kind() const override { return spawn_detail::lockbox_kind(landlock_); }
  std::string limits_enforcement() const override {
    if (cgroups_)
      return "cgroup v2 (" + cgroups_->dir() +
             (cgroups_->has_cpu() ? ")" : "; no cpu controller: cpu is not enforced)");
    return spawn_detail::limits_without_cgroup(no_cgroup_reason_);
  }

  Result<std::unique_ptr<Process>> spawn(uv_loop_t* loop, const SpawnRequest& request,
                                         ExitCallback on_exit) override {
    STACKIE_TRY(validate(request.policy));
    STACKIE_TRY_ASSIGN(policy_fd, policy_pipe(policy_to_json(request.policy)));
    STACKIE_TRY_ASSIGN(err, fd_pair(spawn_detail::cloexec_pipe()));
    Fd error_read = std::move(err.first), error_write = std::move(err.second);

    spawn_detail::SpawnPlan plan;
    plan.argv = spawn_detail::backend_args(lockbox_, landlock_);
    plan.argv.insert(plan.argv.end(), {"--policy-fd", std::to_string(kPolicyFd), "--error-fd",
                                       std::to_string(kErrorFd), "--"});
    // The lockbox itself starts with an empty environment; the block's comes from the policy.
    plan.extra_fds = {policy_fd.fd, error_write.fd};
    static_assert(kPolicyFd == 3 && kErrorFd == 4 && kNetFd == 5 && kLifelineFd == 5,
                  "extra fds start at 3");
    Fd lifeline_ours, lifeline_theirs;
    if (spawn_detail::lockbox_uses_lifeline()) {
      STACKIE_TRY_ASSIGN(pair, fd_pair(spawn_detail::cloexec_pipe()));
      lifeline_theirs = std::move(pair.first);  // the monitor reads
      lifeline_ours = std::move(pair.second);
      plan.extra_fds.push_back(lifeline_theirs.fd);
      plan.argv.insert(plan.argv.end() - 1, {"--lifeline-fd", std::to_string(kLifelineFd)});
    }
    Fd net_ours, net_theirs;
    if (request.net_channel && (landlock_ || spawn_detail::lockbox_uses_lifeline()))
      return Error{UV_ENOTSUP, "a sandbox without a network namespace cannot make sockets in one"};
    if (request.net_channel) {
      STACKIE_TRY_ASSIGN(pair, fd_pair(spawn_detail::net_channel_pair()));
      net_ours = std::move(pair.first);
      net_theirs = std::move(pair.second);
      plan.extra_fds.push_back(net_theirs.fd);
      plan.argv.insert(plan.argv.end() - 1, {"--net-fd", std::to_string(kNetFd)});
      for (int port : request.inside_listen_ports)
        plan.argv.insert(plan.argv.end() - 1, {"--listen", std::to_string(port)});
    }
    std::shared_ptr<BlockCgroup> cgroup;
    if (cgroups_) {
      auto made = cgroups_->make_block(
          request.policy.name.empty() ? "stackie" : request.policy.name, request.policy.limits);
      // Never a silent fallback to weaker limits: the block fails with the reason.
      if (!made.ok()) return Error{made.error().code, "block cgroup: " + made.error().message};
      cgroup = std::move(*made);
      int index = 3 + static_cast<int>(plan.extra_fds.size());
      plan.extra_fds.push_back(cgroup->fd());
      plan.argv.insert(plan.argv.end() - 1, {"--cgroup-fd", std::to_string(index)});
    }
    plan.argv.insert(plan.argv.end(), request.argv.begin(), request.argv.end());
    // The zygote's spare may make this block's namespaces before its request (issue 25). Not
    // for a block with a cgroup: its monitor joins the cgroup before making any namespace, and
    // joining it from inside a user namespace could not be tried here (no delegated cgroup v2
    // on the development machines), so that order stays as it was.
    if (!landlock_ && !cgroup)
      plan.zygote_ahead = zygote::namespaces_ahead(request.policy.network != NetworkMode::host,
                                                   request.policy.identity == Identity::root);

    spawn_detail::NetChannel* net = nullptr;
    if (net_ours.fd >= 0) {
      STACKIE_TRY_ASSIGN(
          channel, spawn_detail::NetChannel::open(loop, net_ours.release(), request.on_listeners));
      net = channel;
    }
    auto error_pipe_opened = ErrorPipe::open(loop, error_read.release(), request.on_exec);
    if (!error_pipe_opened.ok()) {
      if (net != nullptr) net->close();
      return error_pipe_opened.take_error();
    }
    ErrorPipe* error_pipe = *error_pipe_opened;
    // The facade is created after the core, but the exit callback needs it: share a slot.
    auto slot = std::make_shared<LockboxProcess*>(nullptr);
    auto core = start_monitor(loop, plan, request.stdout_pipe, request.stderr_pipe,
                              [slot, on_exit, cgroup](int64_t status, int signum) {
                                // Whatever the block left (nothing, once pid 1 died with
                                // its namespace) dies, and the directory goes when empty.
                                if (cgroup) {
                                  (void)cgroup->kill_all();
                                  cgroup->remove();
                                }
                                ExitStatus exit;
                                exit.exit_status = status;
                                exit.term_signal = signum;
                                // The backstop's SIGKILL, not an exit of the monitor's own
                                // that was reported after the timer ran.
                                exit.outlived_kill = (*slot)->backstop_fired() && signum == SIGKILL;
                                std::string report = (*slot)->take_report();
                                if (status == kSetupFailureStatus && signum == 0)
                                  exit.setup_error = describe_setup_failure(report);
                                on_exit(exit);
                              });
    if (!core.ok()) {
      error_pipe->close();
      if (net != nullptr) net->close();
      return core.take_error();
    }
    auto process = std::make_unique<LockboxProcess>(loop, lockbox_, *core, error_pipe, net, cgroup,
                                                    std::move(lifeline_ours), request.policy);
    *slot = process.get();
    process->set_sandbox_id(request.policy.name);
    return std::unique_ptr<Process>(std::move(process));
  }

 private:
  // The monitor, forked by the lockbox's zygote where there is one (the clone point:
  // zygote_client.h), else exec'd by uv_spawn. Both run the same lockbox code from its start.
  Result<ChildProcess*> start_monitor(uv_loop_t* loop, const spawn_detail::SpawnPlan& plan,
                                      uv_pipe_t* out, uv_pipe_t* err,
                                      const ChildProcess::OnExit& on_exit) {
    if (Zygote* zygote = zygote_for(loop)) {
      auto forked = zygote->start_child(plan, out, err, on_exit);
      if (forked.ok()) return *forked;
    }
    STACKIE_TRY_ASSIGN(core, ProcessCore::start(loop, plan, out, err, on_exit));
    return static_cast<ChildProcess*>(core);
  }
  // The zygote (unless STACKIE_LOCKBOX_ZYGOTE=off), started at a spawn when none runs (it
  // retires when its last monitor ends) and again after it died, until it failed
  // kMaxZygoteFailures times: then every monitor is exec'd. A kernel without pidfd_open needs
  // nothing: the zygote then fails every fork and the spawner falls back.
  Zygote* zygote_for(uv_loop_t* loop) {
    if (zygote_ && zygote_->alive()) return zygote_.get();
    if (zygote_ && !zygote_->retired()) ++zygote_failures_;
    zygote_.reset();
    if (!spawn_detail::lockbox_has_zygote() || zygote_failures_ >= kMaxZygoteFailures)
      return nullptr;
    // The way back to an exec per block, for a host where the zygote misbehaves (stackied(8)).
    if (const char* setting = std::getenv("STACKIE_LOCKBOX_ZYGOTE");
        setting != nullptr && std::string(setting) == "off")
      return nullptr;
    auto started = Zygote::start(loop, lockbox_);
    if (!started.ok()) {
      ++zygote_failures_;
      return nullptr;
    }
    zygote_ = std::move(*started);
    return zygote_.get();
  }

  static constexpr int kMaxZygoteFailures = 3;
  std::string lockbox_;
  std::unique_ptr<CgroupTree> cgroups_;
  std::string no_cgroup_reason_;
  bool landlock_;
  std::unique_ptr<Zygote> zygote_;
  int zygote_failures_ = 0;
};

}  // namespace

std::unique_ptr<Spawner> make_lockbox_spawner(std::string lockbox_path,
                                              std::unique_ptr<CgroupTree> cgroups,
                                              std::string no_cgroup_reason, bool landlock) {
  return std::make_unique<LockboxSpawner>(std::move(lockbox_path), std::move(cgroups),
                                          std::move(no_cgroup_reason), landlock);
}

SandboxKind native_sandbox_kind() {
  return spawn_detail::lockbox_kind(false);
}

Result<std::string> find_lockbox() {
  if (const char* env = std::getenv("STACKIE_LOCKBOX"); env != nullptr && *env != '\0') {
    if (::access(env, X_OK) != 0)
      return system_error(errno, std::string("$STACKIE_LOCKBOX ") + env);
    return std::string(env);
  }
  if (std::string dir = spawn_detail::running_executable(); !dir.empty()) {
    dir.erase(dir.rfind('/'));
    std::string candidate = dir + "/stackie-lockbox";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  // An installed tree wherever it is (DESTDIR, moved): <prefix>/libexec/stackie.
  std::string relocated = relocated_install_dir(STACKIE_INSTALL_LIBEXECDIR "/stackie");
  if (!relocated.empty()) {
    std::string candidate = relocated + "/stackie-lockbox";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  std::string installed = std::string(STACKIE_LIBEXECDIR) + "/stackie-lockbox";
  if (::access(installed.c_str(), X_OK) == 0) return installed;
  return Error{UV_ENOENT,
               "stackie-lockbox not found ($STACKIE_LOCKBOX, next to stackied, " + installed + ")"};
}

}  // namespace stackie
