// What a block uses now (`stats`, docs/ipc.md STATS_ROW): CPU, memory, processes, storage I/O.
// Read on demand only (a request samples; nothing runs while nobody asks): from the block's
// cgroup where it has one, and from /proc for the processes of its sandbox, i.e. every
// descendant of the process the daemon spawned (the launcher itself is outside the sandbox and
// is not counted). The block is hostile: its processes name themselves (a `comm` holding ") "
// and numbers), so /proc/PID/stat is read from its last ')' on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "spawn/cgroup_tree.h"

namespace stackie {

// Every process's parent, read once per sample for all blocks.
class ProcessTable {
 public:
  // Reads `proc_root` (/proc; tests pass a fake tree).
  static ProcessTable read(const std::string& proc_root = "/proc");
  // Every live process below `root`, not `root` itself, at most `limit` of them.
  std::vector<int> descendants(int root, size_t limit = 100000) const;

 private:
  std::multimap<int, int> children_;  // parent -> child
};

// The fields of /proc/PID/stat after the command name: [0] is the state (field 3). The name is
// skipped up to its last ')', whatever it holds. Empty when the text has no ')'.
std::vector<std::string> stat_fields_after_name(const std::string& stat);

struct StatsSample {
  uint64_t at_ms = 0;  // monotonic (uv_now)
  bool running = false;
  bool cgroup = false;
  uint64_t cpu_usec = 0;      // cgroup cpu.stat, else utime+stime of the processes
  uint64_t memory_bytes = 0;  // cgroup memory.current, else the RSS sum
  int64_t pids = 0;           // cgroup pids.current, else the processes found
  std::optional<uint64_t> rss_bytes, pss_bytes, read_bytes, write_bytes;  // /proc sums
};

// One sample of the processes below `root_pid` (0: not running) and of its cgroup.
StatsSample sample_block(const ProcessTable& table, int root_pid,
                         const std::optional<CgroupUsage>& cgroup, uint64_t at_ms,
                         const std::string& proc_root = "/proc");

// CPU % between two samples of the same run (100 = one core busy); null when it cannot tell.
Json cpu_percent(const StatsSample& before, const StatsSample& after);

// STATS_ROW's numbers: {source, cpu_percent, memory_bytes, rss_bytes, pss_bytes, pids,
// read_bytes, write_bytes}; all null when not running.
Json stats_fields(const StatsSample& before, const StatsSample& after);

}  // namespace stackie
