// The landlock backend's process tree (stackie-lockbox(1) BACKENDS), for hosts where the
// namespace lockbox cannot run (user namespaces denied or without capabilities):
//
//   caller (stackied) -> monitor (this process: the block's cgroup or rlimits, subreaper)
//                          -> block (clone CLONE_VM|CLONE_VFORK, locked down + landlocked)
//
// No namespace: the block sees the host's pid space, its uid, hostname and network (closed by
// Landlock's TCP rules). Death is total without a pid namespace because the monitor is the
// block's child subreaper: every process the block leaves behind (a setsid'd daemon included)
// is re-parented to the monitor, which kills them all when the block exits, when the daemon
// asks (kTreeKillSignal) and when its caller dies (the same signal as its parent-death
// signal). The block itself dies with the monitor (PR_SET_PDEATHSIG). With a delegated cgroup
// the daemon also kills the cgroup. A block cannot signal the monitor: with Landlock ABI 6 its
// domain is scoped for signals.
//
// The policy stays in the monitor as a sealed memfd, so `--join MONITOR` rebuilds the very same
// ruleset; reading it needs ptrace-read access to the monitor, which Landlock refuses to a
// process of the block's domain.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "sandbox/linux_landlock.h"
#include "sandbox/linux_launch.h"
#include "sandbox/linux_launch_common.h"
#include "sandbox/linux_limits.h"
#include "sandbox/linux_lockdown.h"

namespace stackie::linux_sandbox {
namespace {

constexpr char kPolicyMemfd[] = "stackie-landlock-policy";

// The forwarded signals, CHLD, and the tree kill.
const sigset_t& monitor_signals() {
  static const sigset_t set = [] {
    sigset_t s = handled_signals();
    sigaddset(&s, kTreeKillSignal);
    return s;
  }();
  return set;
}

// The monitor's children now (the block, and whatever the block left behind: re-parented here).
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  std::string path = "/proc/self/task/" + std::to_string(getpid()) + "/children";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  char* cursor = text.data();
  while (*cursor) {
    char* end = nullptr;
    long pid = std::strtol(cursor, &end, 10);
    if (end == cursor) break;
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
    cursor = end;
  }
  return out;
}

// SIGKILL every descendant until none is left: a child killed here re-parents its own
// children to us (subreaper), so the loop reaches the whole tree, forks racing it included.
void kill_tree() {
  for (;;) {
    for (pid_t pid : own_children()) kill(pid, SIGKILL);
    bool reaped = false;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) reaped = true;
    if (pid < 0 && errno == ECHILD) return;
    if (!reaped) {
      timespec pause{0, 1000000};
      nanosleep(&pause, nullptr);
    }
  }
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitSetupFailed;
}

// Forward signals to the block until it exits, reaping orphans on the way; then the rest of
// the tree dies. kTreeKillSignal kills everything at once.
int monitor_until_exit(pid_t block) {
  int sfd = signalfd(-1, &monitor_signals(), SFD_CLOEXEC);
  for (;;) {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == block) {
        kill_tree();
        return exit_code_of(status);
      }
    }
    siginfo_t info{};
    int sig;
    if (sfd >= 0) {
      signalfd_siginfo si;
      if (read(sfd, &si, sizeof si) != sizeof si) continue;
      sig = static_cast<int>(si.ssi_signo);
    } else {
      sig = sigwaitinfo(&monitor_signals(), &info);
    }
    if (sig == kTreeKillSignal) {
      kill_tree();
      return 128 + SIGKILL;
    }
    if (sig > 0 && sig != SIGCHLD) kill(block, sig);
  }
}

// The policy as the joiner will read it: a sealed memfd kept open in the monitor.
int policy_memfd(const SandboxPolicy& policy) {
  int fd = memfd_create(kPolicyMemfd, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  std::string json = policy_to_json(policy);
  size_t done = 0;
  while (done < json.size()) {
    ssize_t n = write(fd, json.data() + done, json.size() - done);
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
  return fd;
}

ExecPlan plan_for(const SandboxPolicy& policy, const std::vector<std::string>& command,
                  const std::vector<std::pair<std::string, std::string>>& environment) {
  ExecPlan plan;
  plan.path = resolve_command(command[0], policy);
  plan.args = command;
  bool has_tmpdir = false;
  for (const auto& [name, value] : environment) {
    plan.env.push_back(name + "=" + value);
    has_tmpdir = has_tmpdir || name == "TMPDIR";
  }
  // The namespace lockbox shows the block's temp dir as /tmp; here /tmp is the host's (and
  // closed), so programs are pointed at the block's own through TMPDIR.
  if (!has_tmpdir && !policy.host_tmp_dir.empty())
    plan.env.push_back("TMPDIR=" + policy.host_tmp_dir);
  plan.reset_signals = monitor_signals();
  plan.parent_death_signal = true;
  plan.deny_unix_sockets = true;
  return plan;
}

std::optional<SetupError> enter_working_dir(const std::string& dir) {
  std::string path = dir.empty() ? "/" : dir;
  if (chdir(path.c_str()) != 0) return setup_error("chdir", errno, "working directory " + path);
  return std::nullopt;
}

// The policy a landlock monitor keeps (policy_memfd), read through /proc/PID/fd; nullopt when
// `pid` holds none (it is not a landlock monitor).
std::optional<std::string> monitor_policy(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr) return std::nullopt;
  std::string wanted = std::string("/memfd:") + kPolicyMemfd + " (deleted)";
  std::optional<std::string> found;
  while (dirent* entry = readdir(fds)) {
    std::string path = dir + "/" + entry->d_name;
    char link[256];
    ssize_t n = readlink(path.c_str(), link, sizeof link);
    if (n <= 0 || std::string(link, static_cast<size_t>(n)) != wanted) continue;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    std::string text;
    char buffer[16384];
    ssize_t got;
    while ((got = read(fd, buffer, sizeof buffer)) > 0)
      text.append(buffer, static_cast<size_t>(got));
    close(fd);
    found = std::move(text);
    break;
  }
  closedir(fds);
  return found;
}

}  // namespace

int run_landlocked(const LaunchRequest& request) {
  // The tree kill is blocked (and taken from the signalfd) before it can arrive as the
  // parent-death signal: its default action would end the monitor without killing the tree.
  sigset_t blocked = monitor_signals();
  sigprocmask(SIG_BLOCK, &blocked, nullptr);
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, kTreeKillSignal);
  if (getppid() != caller) return kExitSetupFailed;  // the caller is already gone
  if (request.sink.error_fd >= 0) {
    pollfd caller_alive{request.sink.error_fd, POLLOUT, 0};
    if (poll(&caller_alive, 1, 0) == 1 && (caller_alive.revents & POLLERR)) return kExitSetupFailed;
  }
  auto fail = [&](const SetupError& error) {
    report(request.sink, error);
    return kExitSetupFailed;
  };
  if (request.net.fd >= 0)
    return fail(setup_error("listen", EINVAL,
                            "--net-fd needs a network namespace (the landlock backend has none: "
                            "ports are the host's, opened by --allow-bind/--allow-connect)"));
  int ruleset = -1;
  if (auto error = make_landlock_ruleset(request.policy, &ruleset)) return fail(*error);
  if (request.cgroup_fd >= 0) {
    if (auto error = join_cgroup(request.cgroup_fd)) return fail(*error);
  } else if (auto error = apply_rlimits(request.policy.limits, /*own_user_namespace=*/false)) {
    return fail(*error);
  }
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    return fail(setup_error("subreaper", errno, "become the block's child subreaper"));
  int policy_fd = policy_memfd(request.policy);
  if (policy_fd < 0) return fail(setup_error("landlock", errno, "keep the policy for --join"));
  if (auto error = enter_working_dir(request.policy.working_dir)) return fail(*error);

  ExecPlan plan = plan_for(request.policy, request.command, request.policy.environment);
  plan.landlock_fd = ruleset;
  plan.pass_fds = request.policy.pass_fds;
  mode_t mask = umask(022);
  umask(mask);
  plan.umask_value = mask;
  plan.finish();
  ChildFailure failure;
  pid_t block = spawn_locked_down(plan, &failure);
  close(ruleset);
  if (block < 0) return fail(setup_error("fork", -block, "start the block"));
  if (failure.step) {
    int status = 0;
    waitpid(block, &status, 0);
    report(request.sink, describe_child_failure(failure, request.command[0]));
    return WIFEXITED(status) ? WEXITSTATUS(status) : kExitSetupFailed;
  }
  // The block runs: the caller sees EOF on the error fd once every copy is closed.
  if (request.sink.error_fd >= 0) close(request.sink.error_fd);
  for (int fd : request.policy.pass_fds) close(fd);
  close_range(0, 2, 0);  // stdio belongs to the block
  int code = monitor_until_exit(block);
  close(policy_fd);
  return code;
}

std::optional<int> join_landlocked(pid_t pid, const LaunchRequest& request) {
  std::optional<std::string> json = monitor_policy(pid);
  if (!json) return std::nullopt;
  auto fail = [&](const SetupError& error) {
    report(request.sink, error);
    return kExitSetupFailed;
  };
  auto policy = policy_from_json(*json);
  if (!policy.ok())
    return fail(setup_error(
        "join", EINVAL, "the policy of " + std::to_string(pid) + ": " + policy.error().message));
  if (!request.policy.name.empty() && request.policy.name != policy->name)
    return fail(setup_error("join", ESRCH,
                            "process " + std::to_string(pid) + " is sandbox '" + policy->name +
                                "', not '" + request.policy.name + "'"));
  if (auto error = adopt_limits_of(pid)) return fail(*error);
  int ruleset = -1;
  if (auto error = make_landlock_ruleset(*policy, &ruleset)) return fail(*error);
  std::string dir =
      request.policy.working_dir.empty() ? policy->working_dir : request.policy.working_dir;
  if (auto error = enter_working_dir(dir)) return fail(*error);
  block_handled_signals();
  install_forwarding_handlers();
  ExecPlan plan = plan_for(*policy, request.command, request.policy.environment);
  plan.landlock_fd = ruleset;
  plan.reset_signals = handled_signals();
  plan.controlling_tty = true;
  mode_t mask = umask(022);
  umask(mask);
  plan.umask_value = mask;
  plan.finish();
  ChildFailure failure;
  pid_t child = fork_locked_down(plan, &failure);
  close(ruleset);
  if (child < 0) return fail(setup_error("fork", -child, "start the command"));
  // This process only forwards signals and waits from here on, outside the block's domain: it
  // keeps nothing a process of the block could borrow (as the namespace joiner does).
  if (int err = drop_privileges()) {
    kill(child, SIGKILL);
    return fail(setup_error("join", err, "drop the joiner's capabilities"));
  }
  if (failure.step) {
    int code = forward_until_exit(child);
    report(request.sink, describe_child_failure(failure, request.command[0]));
    return code;
  }
  if (request.sink.error_fd >= 0) close(request.sink.error_fd);
  return forward_until_exit(child);
}

}  // namespace stackie::linux_sandbox
