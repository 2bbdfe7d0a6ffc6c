// `stackie-lockbox --join PID -- CMD` (DESIGN.md §1): enter a running sandbox the caller owns
// (as nsenter would, no privilege needed) and run CMD with the same lockdown as the block.
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox/linux_launch.h"
#include "sandbox/linux_launch_common.h"
#include "sandbox/linux_limits.h"
#include "sandbox/linux_lockdown.h"

namespace stackie::linux_sandbox {
namespace {

// The pid of `pid` in each nested pid namespace, outermost first ("NSpid:" of status).
std::vector<std::string> ns_pids(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::vector<std::string> out;
    std::string field;
    while (fields >> field) out.push_back(field);
    return out;
  }
  return {};
}

std::vector<pid_t> children(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  pid_t child;
  while (file >> child) out.push_back(child);
  return out;
}

// PID inside a sandbox: itself. PID a monitor: its child that is pid 1 of a nested pid ns.
// Either way the sandbox must be complete: pid 1 has started the block (which happens only
// after pivot_root), so a joiner never sees a half-built root.
std::optional<SetupError> resolve_target(pid_t pid, pid_t* target) {
  std::vector<std::string> own = ns_pids(pid);
  if (own.empty()) return setup_error("join", ESRCH, "no process " + std::to_string(pid));
  if (own.size() > ns_pids(getpid()).size()) {
    *target = pid;
    return std::nullopt;
  }
  for (pid_t child : children(pid)) {
    std::vector<std::string> nested = ns_pids(child);
    if (nested.size() > own.size() && nested.back() == "1") {
      if (children(child).empty())
        return setup_error("join", EAGAIN,
                           "the sandbox of " + std::to_string(pid) + " is still starting");
      *target = child;
      return std::nullopt;
    }
  }
  return setup_error("join", ESRCH,
                     "process " + std::to_string(pid) + " is neither a stackie sandbox nor in one");
}

}  // namespace

int join_sandbox(pid_t pid, const LaunchRequest& request) {
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) return kExitSetupFailed;

  pid_t target = 0;
  if (auto error = resolve_target(pid, &target)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, target, 0));
  if (pidfd < 0) {
    report(request.sink, setup_error("join", errno, "pidfd_open " + std::to_string(target)));
    return kExitSetupFailed;
  }
  // What runs inside is bound by the sandbox's limits, like the block (linux_limits.h).
  if (auto error = adopt_limits_of(target)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  // The target's working directory, taken before the mount namespace changes under us.
  int cwd =
      open(("/proc/" + std::to_string(target) + "/cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  // All namespaces in one atomic call (pidfd form of setns, Linux 5.8). The user namespace
  // first gives us the capabilities in it that the others require; they are dropped again in
  // the child before CMD runs.
  int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
              CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (setns(pidfd, flags) != 0) {
    int err = errno;
    report(request.sink,
           setup_error("setns", err, "enter the namespaces of " + std::to_string(target)));
    return kExitSetupFailed;
  }
  close(pidfd);
  const std::string& dir = request.policy.working_dir;
  if (!dir.empty() ? chdir(dir.c_str()) != 0 : (cwd < 0 || fchdir(cwd) != 0)) {
    if (!dir.empty() || chdir("/") != 0) {
      report(request.sink, setup_error("chdir", errno, "working directory " + dir));
      return kExitSetupFailed;
    }
  }
  if (cwd >= 0) close(cwd);

  block_handled_signals();
  install_forwarding_handlers();
  ExecPlan plan;
  plan.path = resolve_command(request.command[0], request.policy);
  plan.args = request.command;
  for (const auto& [name, value] : request.policy.environment)
    plan.env.push_back(name + "=" + value);
  plan.reset_signals = handled_signals();
  mode_t mask = umask(022);
  umask(mask);
  plan.umask_value = mask;
  plan.parent_death_signal = true;
  plan.finish();

  ChildFailure failure;
  pid_t child = spawn_locked_down(plan, &failure);
  if (child < 0) {
    report(request.sink, setup_error("fork", -child, "start the command"));
    return kExitSetupFailed;
  }
  if (failure.step) {
    int code = forward_until_exit(child, false);
    report(request.sink, describe_child_failure(failure, request.command[0]));
    return code;
  }
  if (request.sink.error_fd >= 0) close(request.sink.error_fd);
  return forward_until_exit(child, false);
}

}  // namespace stackie::linux_sandbox
