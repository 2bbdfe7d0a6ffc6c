#include "sandbox/linux_limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "base/cgroup_v2.h"

namespace stackie::linux_sandbox {
namespace {

// Tasks (threads included) whose real uid is `uid`, from /proc/N/status "Uid:" (the first
// field is the real uid, the one RLIMIT_NPROC counts by) and "Threads:": the kernel counts every
// task of the user against RLIMIT_NPROC, so a count of processes alone left a user with
// threaded programs running (a compiler, a browser) less than --pids, or no fork at all.
long count_tasks_of(uid_t uid) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  long count = 0;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string path = std::string("/proc/") + entry->d_name + "/status";
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // exited meanwhile
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    const char* line = std::strstr(buf, "\nUid:");
    unsigned long real = 0;
    if (line == nullptr || std::sscanf(line + 5, "%lu", &real) != 1 || real != uid) continue;
    const char* threads_line = std::strstr(buf, "\nThreads:");
    long threads = 1;
    if (threads_line != nullptr && std::sscanf(threads_line + 9, "%ld", &threads) != 1) threads = 1;
    count += threads > 0 ? threads : 1;
  }
  closedir(proc);
  return count;
}

std::optional<SetupError> set_limit(int resource, rlim_t value, const char* what) {
  // Hard = soft: the block cannot raise it back.
  rlimit limit{value, value};
  rlimit current{};
  if (getrlimit(resource, &current) == 0 && current.rlim_max != RLIM_INFINITY &&
      current.rlim_max < value)
    return std::nullopt;  // already tighter (an unprivileged process cannot raise it anyway)
  if (setrlimit(resource, &limit) != 0)
    return setup_error("limits", errno, std::string("setrlimit ") + what);
  return std::nullopt;
}

}  // namespace

std::optional<SetupError> join_cgroup(int cgroup_fd) {
  int fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
  int err = errno;
  close(cgroup_fd);
  if (fd < 0) return setup_error("cgroup", err, "open the block's cgroup.procs");
  ssize_t n = write(fd, "0", 1);
  err = errno;
  close(fd);
  if (n != 1) return setup_error("cgroup", err, "move the sandbox into the block's cgroup");
  return std::nullopt;
}

std::optional<SetupError> adopt_limits_of(pid_t target) {
  for (int resource : {RLIMIT_NPROC, RLIMIT_DATA}) {
    rlimit theirs{};
    if (prlimit(target, static_cast<__rlimit_resource>(resource), nullptr, &theirs) != 0)
      return setup_error("limits", errno, "read the limits of " + std::to_string(target));
    rlimit ours{};
    getrlimit(resource, &ours);
    // Never raise: an unprivileged process cannot, and must not try to.
    if (theirs.rlim_max == RLIM_INFINITY || theirs.rlim_max > ours.rlim_max) continue;
    rlimit lowered{std::min(theirs.rlim_cur, ours.rlim_cur), theirs.rlim_max};
    if (setrlimit(resource, &lowered) != 0)
      return setup_error("limits", errno, "take the sandbox's limits");
  }
  // The target's cgroup as this process sees it; only stackied's block cgroups are joined (a
  // sandbox started by hand in another session's cgroup is not ours to move into).
  std::string path;
  {
    int fd = open(("/proc/" + std::to_string(target) + "/cgroup").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return setup_error("cgroup", errno, "read the cgroup of " + std::to_string(target));
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    path = cgroup_v2_path(std::string_view(buf, n > 0 ? static_cast<size_t>(n) : 0));
  }
  std::string leaf = path.substr(path.rfind('/') + 1);
  if (path.empty() || leaf.rfind("block-", 0) != 0) return std::nullopt;
  std::string mountinfo;
  {
    int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    char buf[4096];
    ssize_t n;
    while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
      mountinfo.append(buf, static_cast<size_t>(n));
    if (fd >= 0) close(fd);
  }
  std::string mount = cgroup2_mount_point(mountinfo);
  if (mount.empty()) return setup_error("cgroup", ENOENT, "no cgroup2 mount for " + path);
  int dir = open((mount + path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return setup_error("cgroup", errno, "open the sandbox's cgroup " + mount + path);
  return join_cgroup(dir);
}

bool nproc_counted_per_user_namespace() {
  utsname name{};
  if (uname(&name) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(name.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 14);
}

std::optional<SetupError> apply_rlimits(const ResourceLimits& limits, bool own_user_namespace) {
  if (limits.pids > 0) {
    rlim_t nproc = static_cast<rlim_t>(limits.pids);
    if (!own_user_namespace || !nproc_counted_per_user_namespace()) {
      long user_tasks = count_tasks_of(getuid());
      if (user_tasks < 0) return setup_error("limits", errno, "count the user's processes");
      nproc += static_cast<rlim_t>(user_tasks);
    }
    if (auto error = set_limit(RLIMIT_NPROC, nproc, "RLIMIT_NPROC")) return error;
  }
  if (limits.memory_bytes > 0 && limits.memory_given) {
    if (auto error =
            set_limit(RLIMIT_DATA, static_cast<rlim_t>(limits.memory_bytes), "RLIMIT_DATA"))
      return error;
  }
  return std::nullopt;
}

}  // namespace stackie::linux_sandbox
