#include "supervisor/block_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "supervisor/host_os.h"

namespace stackie {

namespace {

// A /proc file whole (they are small); "" when unreadable (the process went, or is not ours).
std::string read_small(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool all_digits(const char* text) {
  if (*text == '\0') return false;
  for (; *text; ++text)
    if (*text < '0' || *text > '9') return false;
  return true;
}

std::optional<uint64_t> number(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  return value;
}

// "Name:   123 kB" lines (status, smaps_rollup): the value in bytes.
std::optional<uint64_t> kib_field(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(name + ":")) continue;
    std::istringstream fields(line.substr(name.size() + 1));
    uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

// "name: 123" lines (io).
std::optional<uint64_t> plain_field(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(name + ": ")) continue;
    return number(line.substr(name.size() + 2));
  }
  return std::nullopt;
}

void add(std::optional<uint64_t>& sum, std::optional<uint64_t> value) {
  if (value) sum = sum.value_or(0) + *value;
}

Json optional_json(const std::optional<uint64_t>& value) {
  return value ? Json(static_cast<int64_t>(*value)) : Json();
}

}  // namespace

std::vector<std::string> stat_fields_after_name(const std::string& stat) {
  std::vector<std::string> fields;
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return fields;
  std::istringstream rest(stat.substr(close_paren + 1));
  std::string field;
  while (rest >> field) fields.push_back(field);
  return fields;
}

ProcessTable ProcessTable::read(const std::string& proc_root) {
  ProcessTable table;
  DIR* dir = ::opendir(proc_root.c_str());
  if (dir == nullptr) return table;
  while (dirent* entry = ::readdir(dir)) {
    if (!all_digits(entry->d_name)) continue;
    auto fields = stat_fields_after_name(read_small(proc_root + "/" + entry->d_name + "/stat"));
    if (fields.size() < 2) continue;
    auto parent = number(fields[1]);
    if (!parent) continue;
    table.children_.emplace(static_cast<int>(*parent), std::atoi(entry->d_name));
  }
  ::closedir(dir);
  return table;
}

std::vector<int> ProcessTable::descendants(int root, size_t limit) const {
  std::vector<int> out;
  std::vector<int> todo{root};
  while (!todo.empty() && out.size() < limit) {
    int pid = todo.back();
    todo.pop_back();
    auto [begin, end] = children_.equal_range(pid);
    for (auto it = begin; it != end && out.size() < limit; ++it) {
      if (it->second == root) continue;  // a table read mid-change cannot loop us
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

StatsSample sample_block(const ProcessTable& table, int root_pid,
                         const std::optional<CgroupUsage>& cgroup, uint64_t at_ms,
                         const std::string& proc_root) {
  StatsSample sample;
  sample.at_ms = at_ms;
  if (root_pid <= 0) return sample;
  sample.running = true;
  static const long ticks_per_second = clock_ticks_per_second();
  uint64_t ticks = 0;
  int64_t found = 0;
  for (int pid : table.descendants(root_pid)) {
    std::string base = proc_root + "/" + std::to_string(pid);
    auto fields = stat_fields_after_name(read_small(base + "/stat"));
    // Fields 14 and 15 (utime, stime) are [11] and [12] after the name.
    if (fields.size() < 13 || fields[0] == "Z" || fields[0] == "X") continue;
    ++found;
    ticks += number(fields[11]).value_or(0) + number(fields[12]).value_or(0);
    add(sample.rss_bytes, kib_field(read_small(base + "/status"), "VmRSS"));
    add(sample.pss_bytes, kib_field(read_small(base + "/smaps_rollup"), "Pss"));
    std::string io = read_small(base + "/io");
    add(sample.read_bytes, plain_field(io, "read_bytes"));
    add(sample.write_bytes, plain_field(io, "write_bytes"));
  }
  if (cgroup) {
    sample.cgroup = true;
    sample.cpu_usec = cgroup->cpu_usec;
    sample.memory_bytes = cgroup->memory_bytes;
    sample.pids = cgroup->pids;
  } else {
    sample.cpu_usec = ticks_per_second > 0 ? ticks * 1000000 / ticks_per_second : 0;
    sample.memory_bytes = sample.rss_bytes.value_or(0);
    sample.pids = found;
  }
  return sample;
}

Json cpu_percent(const StatsSample& before, const StatsSample& after) {
  if (!before.running || !after.running || before.cgroup != after.cgroup) return Json();
  if (after.at_ms <= before.at_ms || after.cpu_usec < before.cpu_usec) return Json();
  double used = static_cast<double>(after.cpu_usec - before.cpu_usec);
  double wall = static_cast<double>(after.at_ms - before.at_ms) * 1000.0;
  return std::round(used / wall * 1000.0) / 10.0;  // one decimal
}

Json stats_fields(const StatsSample& before, const StatsSample& after) {
  if (!after.running)
    return Json::object({{"source", Json()},
                         {"cpu_percent", Json()},
                         {"memory_bytes", Json()},
                         {"rss_bytes", Json()},
                         {"pss_bytes", Json()},
                         {"pids", Json()},
                         {"read_bytes", Json()},
                         {"write_bytes", Json()}});
  return Json::object({{"source", after.cgroup ? "cgroup" : "proc"},
                       {"cpu_percent", cpu_percent(before, after)},
                       {"memory_bytes", static_cast<int64_t>(after.memory_bytes)},
                       {"rss_bytes", optional_json(after.rss_bytes)},
                       {"pss_bytes", optional_json(after.pss_bytes)},
                       {"pids", after.pids},
                       {"read_bytes", optional_json(after.read_bytes)},
                       {"write_bytes", optional_json(after.write_bytes)}});
}

}  // namespace stackie
