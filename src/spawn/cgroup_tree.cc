#include "spawn/cgroup_tree.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "spawn/spawner.h"

namespace stackie {
namespace {

// O_TRUNC as a shell's "echo V > FILE" does: cgroupfs ignores it.
Status write_at(int dir, const char* file, const std::string& text, const std::string& where) {
  int fd = ::openat(dir, file, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return system_error(errno, "open " + where + "/" + file);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return system_error(n < 0 ? err : EIO, "write '" + text + "' to " + where + "/" + file);
  return {};
}

Status write_path(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return system_error(errno, "open " + path);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return system_error(n < 0 ? err : EIO, "write '" + text + "' to " + path);
  return {};
}

std::string read_at(int dir, const char* file) {
  int fd = ::openat(dir, file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

// "KEY VALUE" lines (cpu.stat, memory.events, pids.events): the value of `key`, 0 if absent.
uint64_t keyed_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string name; in >> name;) {
    uint64_t value = 0;
    in >> value;
    if (name == key) return value;
  }
  return 0;
}

std::string max_or(uint64_t value) {
  return value == 0 ? "max" : std::to_string(value);
}

}  // namespace

BlockCgroup::~BlockCgroup() {
  if (fd_ >= 0) ::close(fd_);
}

Status BlockCgroup::kill_all() const {
  if (write_at(fd_, "cgroup.kill", "1", dir_).ok()) return {};
  // Before Linux 5.14: signal each process listed; a fork racing with this is caught by the
  // monitor's end (pid 1's death takes the pid namespace along).
  std::istringstream in(read_at(fd_, "cgroup.procs"));
  for (pid_t pid; in >> pid;) ::kill(pid, SIGKILL);
  return {};
}

Result<CgroupUsage> BlockCgroup::usage() const {
  std::string current = read_at(fd_, "memory.current");
  if (current.empty()) return system_error(errno, "read " + dir_ + "/memory.current");
  CgroupUsage usage;
  usage.memory_bytes = std::strtoull(current.c_str(), nullptr, 10);
  usage.memory_peak_bytes = std::strtoull(read_at(fd_, "memory.peak").c_str(), nullptr, 10);
  usage.pids = std::atoi(read_at(fd_, "pids.current").c_str());
  usage.cpu_usec = keyed_value(read_at(fd_, "cpu.stat"), "usage_usec");
  usage.oom_kills = keyed_value(read_at(fd_, "memory.events"), "oom_kill");
  usage.pids_refused = keyed_value(read_at(fd_, "pids.events"), "max");
  return usage;
}

bool BlockCgroup::remove() const {
  return ::rmdir(dir_.c_str()) == 0 || errno == ENOENT;
}

Result<std::unique_ptr<CgroupTree>> CgroupTree::take_over(const DelegatedCgroup& delegated) {
  auto tree = std::make_unique<CgroupTree>();
  tree->dir_ = delegated.dir;
  tree->has_cpu_ = delegated.has("cpu");
  // cgroup v2 lets a cgroup with controllers enabled for its children hold no process itself:
  // the daemon moves to a leaf of its own first.
  std::string leaf = delegated.dir + "/daemon";
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST)
    return system_error(errno, "mkdir " + leaf);
  STACKIE_TRY(write_path(leaf + "/cgroup.procs", std::to_string(::getpid())));
  std::string controllers = "+pids +memory";
  if (tree->has_cpu_) controllers += " +cpu";
  Status enabled = write_path(delegated.dir + "/cgroup.subtree_control", controllers);
  if (!enabled.ok())
    return Error{enabled.error().code,
                 enabled.error().message +
                     " (another process shares the daemon's cgroup? it must be its own unit)"};
  return tree;
}

Result<std::unique_ptr<BlockCgroup>> CgroupTree::make_block(const std::string& name,
                                                            const ResourceLimits& limits) const {
  std::string dir = dir_ + "/block-" + name;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return system_error(errno, "mkdir " + dir);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return system_error(errno, "open " + dir);
  auto block = std::make_unique<BlockCgroup>(dir, fd);
  // A leftover of an earlier run of this block (its last processes were still being reaped
  // when it exited, or a daemon was killed): nothing of it may share the new run's limits.
  if (!read_at(fd, "cgroup.procs").empty()) STACKIE_TRY(block->kill_all());
  STACKIE_TRY(
      write_at(fd, "pids.max", limits.pids == 0 ? "max" : std::to_string(limits.pids), dir));
  STACKIE_TRY(write_at(fd, "memory.max", max_or(limits.memory_bytes), dir));
  // No swap beyond the limit: a memory bomb must not push the host into swap instead. The file
  // is absent on kernels built without swap accounting.
  if (limits.memory_bytes != 0 && ::faccessat(fd, "memory.swap.max", W_OK, 0) == 0)
    STACKIE_TRY(write_at(fd, "memory.swap.max", "0", dir));
  if (has_cpu_) {
    constexpr int kPeriodUsec = 100000;
    std::string quota = limits.cpu_millis == 0
                            ? "max"
                            : std::to_string(static_cast<int64_t>(limits.cpu_millis) * 100);
    STACKIE_TRY(write_at(fd, "cpu.max", quota + " " + std::to_string(kPeriodUsec), dir));
  }
  return block;
}

DelegatedCgroups take_delegated_cgroups() {
  DelegatedCgroups found;
  auto delegated = find_delegated_cgroup();
  if (!delegated.ok()) {
    found.none_because = delegated.error().message;
    return found;
  }
  auto tree = CgroupTree::take_over(*delegated);
  if (tree.ok())
    found.tree = std::move(*tree);
  else
    found.none_because = tree.error().message;
  return found;
}

}  // namespace stackie
