// The daemon's delegated cgroup v2 subtree (stackied(8) LIMITS): one cgroup per sandboxed block,
// holding its limits (pids.max, memory.max, memory.swap.max, cpu.max), killed whole with
// cgroup.kill, and read for `stackie status`. Where none is delegated, the lockbox applies
// rlimits instead (sandbox/linux_limits.h).
//
//   <delegated>/            the daemon's cgroup (systemd: stackied.service, Delegate=yes)
//     daemon/               the daemon itself: a cgroup with children holds no process (v2)
//     block-<sandbox-id>/   one per running block; the lockbox joins it (--cgroup-fd)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/cgroup_v2.h"
#include "base/error.h"
#include "policy/resource_limits.h"

namespace stackie {

struct CgroupUsage {
  uint64_t memory_bytes = 0;       // memory.current
  uint64_t memory_peak_bytes = 0;  // memory.peak (0 where the kernel has none)
  int pids = 0;                    // pids.current
  uint64_t cpu_usec = 0;           // cpu.stat usage_usec
  uint64_t oom_kills = 0;          // memory.events oom_kill
  uint64_t pids_refused = 0;       // pids.events max: forks refused at pids.max
};

// One block's cgroup. Owns the directory fd handed to the lockbox.
class BlockCgroup {
 public:
  BlockCgroup(std::string dir, int fd) : dir_(std::move(dir)), fd_(fd) {}
  ~BlockCgroup();
  BlockCgroup(const BlockCgroup&) = delete;
  BlockCgroup& operator=(const BlockCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  int fd() const { return fd_; }
  // SIGKILL every process in it (cgroup.kill; one by one from cgroup.procs on kernels < 5.14).
  Status kill_all() const;
  Result<CgroupUsage> usage() const;
  // rmdir once empty; false while processes are still being reaped (the next make() of the
  // same block reuses the directory).
  bool remove() const;

 private:
  std::string dir_;
  int fd_ = -1;
};

class CgroupTree {
 public:
  // Takes over `delegated`: moves this process into <dir>/daemon and enables the pids, memory
  // (and cpu when available) controllers for the children. The error says why not.
  static Result<std::unique_ptr<CgroupTree>> take_over(const DelegatedCgroup& delegated);

  // <dir>/block-<name> with `limits` written (a leftover of the same name is emptied and
  // reused). 0 fields are "max".
  Result<std::unique_ptr<BlockCgroup>> make_block(const std::string& name,
                                                  const ResourceLimits& limits) const;
  const std::string& dir() const { return dir_; }
  bool has_cpu() const { return has_cpu_; }

 private:
  std::string dir_;
  bool has_cpu_ = false;
};

}  // namespace stackie
