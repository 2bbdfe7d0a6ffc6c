// `stackie-lockbox --join PID -- CMD` (DESIGN.md §1): enter a running sandbox the caller owns
// (as nsenter would, no privilege needed) and run CMD with the same lockdown as the block.
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox/linux_launch.h"
#include "sandbox/linux_launch_common.h"
#include "sandbox/linux_limits.h"
#include "sandbox/linux_lockdown.h"
#include "sandbox/linux_namespaces.h"

namespace stackie::linux_sandbox {
namespace {

// A /proc file whole, with read(2): libstdc++'s ifstream throws when the process exits
// between open and read, and a target may well exit meanwhile. Empty when it is gone.
std::string read_proc(pid_t pid, const std::string& file) {
  std::string text;
  int fd = open(("/proc/" + std::to_string(pid) + "/" + file).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return text;
}

// The value of field `name` ("NSpid", "PPid") of /proc/PID/status.
std::string status_field(pid_t pid, const std::string& name) {
  std::istringstream status(read_proc(pid, "status"));
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
  return {};
}

// The pid of `pid` in each nested pid namespace, outermost first.
std::vector<std::string> ns_pids(pid_t pid) {
  std::istringstream fields(status_field(pid, "NSpid"));
  std::vector<std::string> out;
  std::string field;
  while (fields >> field) out.push_back(field);
  return out;
}

pid_t parent_of(pid_t pid) {
  return static_cast<pid_t>(std::atol(status_field(pid, "PPid").c_str()));
}

std::vector<pid_t> children(pid_t pid) {
  std::istringstream file(read_proc(pid, "task/" + std::to_string(pid) + "/children"));
  std::vector<pid_t> out;
  pid_t child;
  while (file >> child) out.push_back(child);
  return out;
}

bool alive(int pidfd) {
  return syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0;
}

// The process to join, held by a pidfd so that a recycled pid can never be joined: each pid is
// opened before /proc is read about it, and the pidfd is checked alive after, which proves the
// /proc reads described the very process the pidfd holds.
struct Target {
  pid_t pid = 0;
  int pidfd = -1;
};

std::optional<SetupError> open_pidfd(pid_t pid, int* pidfd) {
  *pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (*pidfd >= 0) return std::nullopt;
  if (errno == ESRCH) return setup_error("join", ESRCH, "no process " + std::to_string(pid));
  return setup_error("join", errno, "pidfd_open " + std::to_string(pid));
}

// Whether `pid`'s root is ours (false when it cannot be seen). A sandbox's processes have the
// root pivot_root made; one in a sandbox's namespaces with the host's root is a pid 1 that has
// not built it yet (forked ahead and waiting, or building), and a process that joined it would
// hand the block the host's files: the block may open /proc/JOINER/root.
bool root_is_ours(pid_t pid) {
  struct stat theirs, ours;
  return stat(("/proc/" + std::to_string(pid) + "/root").c_str(), &theirs) == 0 &&
         stat("/", &ours) == 0 && theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

// PID inside a sandbox: itself. PID a monitor: its child that is pid 1 of a nested pid ns.
// Either way the sandbox must be complete: pid 1 has started the block (which happens only
// after pivot_root), or PID has a root of its own, so a joiner never sees a half-built root.
std::optional<SetupError> resolve_target(pid_t pid, Target* target) {
  int given = -1;
  if (auto error = open_pidfd(pid, &given)) return error;
  std::vector<std::string> own = ns_pids(pid);
  if (own.empty()) {
    close(given);
    return setup_error("join", ESRCH, "no process " + std::to_string(pid));
  }
  if (own.size() > ns_pids(getpid()).size()) {
    const bool built = !root_is_ours(pid);
    if (!alive(given)) {
      close(given);
      return setup_error("join", ESRCH, "process " + std::to_string(pid) + " exited");
    }
    if (!built) {
      close(given);
      return setup_error("join", EAGAIN,
                         "process " + std::to_string(pid) +
                             " is in a sandbox that is not built yet (its root is the host's)");
    }
    *target = {pid, given};
    return std::nullopt;
  }
  for (pid_t child : children(pid)) {
    int child_fd = -1;
    if (open_pidfd(child, &child_fd)) continue;  // gone meanwhile
    std::vector<std::string> nested = ns_pids(child);
    bool init = nested.size() > own.size() && nested.back() == "1";
    bool started = init && !children(child).empty();
    // Read after the child's pidfd was opened, and both still alive: the pidfd holds the
    // monitor's pid 1, not a process that took its number.
    bool still_ours = init && parent_of(child) == pid && alive(child_fd) && alive(given);
    if (!init || !still_ours) {
      close(child_fd);
      continue;
    }
    close(given);
    if (!started) {
      close(child_fd);
      return setup_error("join", EAGAIN,
                         "the sandbox of " + std::to_string(pid) + " is still starting");
    }
    *target = {child, child_fd};
    return std::nullopt;
  }
  close(given);
  return setup_error("join", ESRCH,
                     "process " + std::to_string(pid) + " is neither a stackie sandbox nor in one");
}

// Only the namespaces the block has of its own: a `network: host` block shares the host's
// network namespace, which its user namespace does not own (setns would fail with EPERM), and
// which the joiner is in already.
int namespaces_to_join(pid_t target) {
  static const std::pair<const char*, int> kKinds[] = {
      {"user", CLONE_NEWUSER},    {"mnt", CLONE_NEWNS},  {"pid", CLONE_NEWPID},
      {"net", CLONE_NEWNET},      {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
      {"cgroup", CLONE_NEWCGROUP}};
  int flags = 0;
  for (const auto& [name, flag] : kKinds) {
    struct stat theirs, ours;
    std::string path = "/proc/" + std::to_string(target) + "/ns/" + name;
    bool shared = stat(path.c_str(), &theirs) == 0 &&
                  stat((std::string("/proc/self/ns/") + name).c_str(), &ours) == 0 &&
                  theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
    if (!shared) flags |= flag;
  }
  return flags;
}

// fds 0-2 go to CMD inside the sandbox. The caller's own terminal there would let the block type
// into the caller's shell (TIOCSTI, or simply reading it) for as long as it keeps the fd:
// refuse a terminal that is some session's controlling terminal (ours, or the one a `setsid`
// left us with). `stackie exec` gives CMD a terminal that is nobody's yet, or pipes.
std::optional<SetupError> refuse_callers_terminal() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (!isatty(fd)) continue;
    pid_t session = tcgetsid(fd);
    if (session > 0)
      return setup_error("join", EPERM,
                         "fd " + std::to_string(fd) +
                             " is the caller's terminal (that of session " +
                             std::to_string(session) +
                             "), which CMD would keep inside the sandbox; run it through "
                             "`stackie exec`, which gives CMD a terminal of its own");
  }
  return std::nullopt;
}

}  // namespace

int join_sandbox(pid_t pid, const LaunchRequest& request) {
  // Not dumpable before anything else: from setns on, this process holds every capability of
  // the block's user namespace, and its fork below inherits the flag until execve. A block
  // process can then open neither's /proc/PID/mem or fds (that needs CAP_SYS_PTRACE in the
  // user namespace the mm was created in: the host's).
  if (prctl(PR_SET_DUMPABLE, 0) != 0) {
    report(request.sink, setup_error("join", errno, "make the joiner non-dumpable"));
    return kExitSetupFailed;
  }
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) return kExitSetupFailed;
  if (auto error = refuse_callers_terminal()) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }

  // A landlock monitor has no namespace to enter: its policy is rebuilt as a ruleset instead.
  if (std::optional<int> code = join_landlocked(pid, request)) return *code;

  Target target;
  if (auto error = resolve_target(pid, &target)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  // What runs inside is bound by the sandbox's limits, like the block (linux_limits.h). A pid
  // recycled since resolve_target makes the setns below fail, whatever was read here.
  if (auto error = adopt_limits_of(target.pid)) {
    report(request.sink, *error);
    return kExitSetupFailed;
  }
  // The target's working directory, taken before the mount namespace changes under us.
  int cwd = open(("/proc/" + std::to_string(target.pid) + "/cwd").c_str(),
                 O_PATH | O_DIRECTORY | O_CLOEXEC);
  int flags = namespaces_to_join(target.pid);
  // All namespaces in one atomic call on the pidfd (Linux 5.8): setns fails with ESRCH if the
  // process the pidfd holds is gone, so the pid read above cannot have been recycled. The user
  // namespace first gives us the capabilities in it that the others require; they are dropped
  // in the child before CMD runs, and in this process right after the fork.
  if (setns(target.pidfd, flags) != 0) {
    int err = errno;
    report(request.sink,
           setup_error("setns", err, "enter the namespaces of " + std::to_string(target.pid)));
    return kExitSetupFailed;
  }
  close(target.pidfd);
  // --name: the sandbox the caller means (its hostname, which nothing in it can change
  // without capabilities). A pid read from the daemon may have been recycled by another
  // sandbox of the user's before the pidfd above was opened.
  if (!request.policy.name.empty()) {
    char hostname[256] = {};
    gethostname(hostname, sizeof hostname - 1);
    if (sandbox_hostname(request.policy.name) != hostname) {
      report(request.sink, setup_error("join", ESRCH,
                                       "process " + std::to_string(pid) + " is sandbox '" +
                                           hostname + "', not '" + request.policy.name + "'"));
      return kExitSetupFailed;
    }
  }
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
  plan.controlling_tty = true;
  plan.finish();

  // A fork, not the launch's CLONE_VM|CLONE_VFORK: the block's processes are already running
  // here, and a child sharing our memory would hand them this process once its capabilities
  // are dropped (issue 14).
  ChildFailure failure;
  pid_t child = fork_locked_down(plan, &failure);
  if (child < 0) {
    report(request.sink, setup_error("fork", -child, "start the command"));
    return kExitSetupFailed;
  }
  // This process only forwards signals and waits from here on: no capability needed.
  if (int err = drop_privileges()) {
    kill(child, SIGKILL);
    report(request.sink, setup_error("join", err, "drop the joiner's capabilities"));
    return kExitSetupFailed;
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
