// The passthrough spawner: no isolation at all (`sandbox: false`, --no-sandbox). The block runs
// in its own session and process group so that one kill(-pgid) reaches all of it that stayed
// in the group. A process that calls setsid() itself leaves the group; only a sandbox (a pid
// namespace) can catch those, which is why passthrough is opt-in and reported as such. In the
// daemon the group's leader is a monitor (passthrough_monitor.h) that kills the group when
// the daemon dies.
#include <unistd.h>

#include <csignal>

#include "spawn/passthrough_monitor.h"
#include "spawn/spawn_process.h"
#include "spawn/spawner.h"

namespace stackie {

namespace {

using spawn_detail::ProcessCore;

class PassthroughProcess final : public Process {
 public:
  explicit PassthroughProcess(ProcessCore* core) : core_(core) {}
  ~PassthroughProcess() override {
    int pgid = core_->pid();
    core_->orphan([pgid] { ::kill(-pgid, SIGKILL); });
  }
  int pid() const override { return core_->pid(); }
  bool running() const override { return core_->running(); }
  Status signal(int signum) override {
    if (!core_->running()) return {};
    return send(signum);
  }
  // Also right after the leader exited: what it left in its group dies with it (as systemd
  // does with a unit's remaining processes). The pgid cannot be reused while a member lives.
  Status kill_all() override { return send(SIGKILL); }
  std::vector<std::string> join_argv(const std::vector<std::string>& command,
                                     const std::vector<std::string>&) const override {
    return running() ? command : std::vector<std::string>{};
  }

 private:
  Status send(int signum) {
    // The whole group: the block's helpers get the stop signal too, as systemd's default
    // KillMode=control-group does.
    if (::kill(-core_->pid(), signum) != 0 && errno != ESRCH)
      return system_error(errno, "kill process group " + std::to_string(core_->pid()));
    return {};
  }
  ProcessCore* core_;
};

class PassthroughSpawner final : public Spawner {
 public:
  explicit PassthroughSpawner(std::string monitor) : monitor_(std::move(monitor)) {}
  SandboxKind kind() const override { return SandboxKind::passthrough; }
  Result<std::unique_ptr<Process>> spawn(uv_loop_t* loop, const SpawnRequest& request,
                                         ExitCallback on_exit) override {
    spawn_detail::SpawnPlan plan;
    if (!monitor_.empty())
      plan.argv = {monitor_, kPassthroughMonitorFlag, std::to_string(::getpid()), "--"};
    plan.argv.insert(plan.argv.end(), request.argv.begin(), request.argv.end());
    plan.env = spawn_detail::environment_of(request.policy);
    plan.cwd = request.policy.working_dir;
    plan.new_session = true;
    STACKIE_TRY_ASSIGN(core,
                       ProcessCore::start(loop, plan, request.stdout_pipe, request.stderr_pipe,
                                          [on_exit](int64_t status, int signum) {
                                            ExitStatus exit;
                                            exit.exit_status = status;
                                            exit.term_signal = signum;
                                            on_exit(exit);
                                          }));
    // uv_spawn returns once the child has exec'd (an exec failure is its error).
    if (request.on_exec) request.on_exec();
    return std::unique_ptr<Process>(new PassthroughProcess(core));
  }

 private:
  std::string monitor_;
};

}  // namespace

std::unique_ptr<Spawner> make_passthrough_spawner(std::string monitor) {
#ifndef __linux__
  monitor.clear();  // PR_SET_PDEATHSIG is Linux's
#endif
  return std::make_unique<PassthroughSpawner>(std::move(monitor));
}

}  // namespace stackie
