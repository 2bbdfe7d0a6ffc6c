// A real stackied in a temporary STACKIE_HOME, driven over its socket, for the fault suites
// (issue 10). Blocks are the blockhelper program (tests/supervisor/blockhelper.cc), sandboxed by
// the real stackie-lockbox unless a test says otherwise.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ipc/client.h"
#include "support/proc_file.h"
#include "support/process_wait.h"
#include "support/temp_dir.h"

namespace stackie::fault {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

using testing_proc::read_proc_file;

// /proc/PID/stat fields after the command name: index 0 is the state (field 3).
inline std::vector<std::string> stat_fields(int pid) {
  std::string content = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  std::vector<std::string> fields;
  size_t close_paren = content.rfind(')');
  if (close_paren == std::string::npos) return fields;
  std::string rest = content.substr(close_paren + 2), field;
  for (char c : rest) {
    if (c == ' ') {
      fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty()) fields.push_back(field);
  return fields;
}

// Alive and not a zombie.
inline bool process_alive(int pid) {
  auto fields = stat_fields(pid);
  return !fields.empty() && fields[0] != "Z" && fields[0] != "X";
}

// CPU seconds (user + system) the process has used so far.
inline double cpu_seconds(int pid) {
  auto fields = stat_fields(pid);
  if (fields.size() < 13) return -1;
  return double(std::stoll(fields[11]) + std::stoll(fields[12])) / double(::sysconf(_SC_CLK_TCK));
}

// Every live process below `root` (not `root` itself), by the parent links of /proc.
std::vector<int> descendants(int root);
// Every live process whose command line mentions `token`, except this one.
std::vector<int> processes_mentioning(const std::string& token);

class DaemonHarness : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Starts stackied --foreground in our STACKIE_HOME; returns its pid.
  pid_t start_daemon();
  // Waits until the daemon answers; fails the test if it never does.
  ipc::Client connect();
  // Connects once, no retries (for latency measurements).
  Result<ipc::Client> connect_once(ipc::ClientOptions options = {});
  // Writes `yaml` as dir/NAME.yml and brings it up; returns the reply.
  Result<ipc::Reply> up(const std::string& name, const std::string& yaml);
  Json ps_blocks(ipc::Client& client);
  // Polls `done` every 20 ms for at most `timeout` (support/process_wait.h).
  template <typename F>
  bool wait_for(F done, std::chrono::milliseconds timeout) {
    return testing::wait_for(done, timeout);
  }
  // Exit code (or 128+signal) once `pid` ended, -1 if it still runs after timeout.
  int wait_exit(pid_t pid, std::chrono::milliseconds timeout);
  // "starts" of a blockhelper `stamp FILE`: the monotonic ms of each line.
  std::vector<long> stamps(const std::string& file) const;
  std::string socket_path() const { return home_ + "/run/stackied.sock"; }

  testing::TempDir temp_{"stackie-daemon"};
  // STACKIE_HOME beside the stacks' directory, not in it: a block with `path: .` is given its
  // stack file's directory to write, and the loader refuses one that holds STACKIE_HOME.
  testing::TempDir home_temp_{"stackie-daemon-home"};
  std::string dir_, home_, stackied_, stackie_, lockbox_, helper_;  // dir_: temp_'s path
  std::vector<pid_t> daemons_;
  // Set in the environment of the daemons start_daemon() starts from then on.
  std::vector<std::pair<std::string, std::string>> daemon_env_;
};

}  // namespace stackie::fault
