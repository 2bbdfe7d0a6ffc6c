#include "support/daemon_harness.h"

#include <dirent.h>

#include <cstdio>
#include <map>
#include <sstream>

namespace stackie::fault {

namespace {

std::vector<int> all_pids() {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = ::readdir(proc)) {
    int pid = std::atoi(entry->d_name);
    if (pid > 0) pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

}  // namespace

std::vector<int> descendants(int root) {
  std::multimap<int, int> children;  // parent -> child
  for (int pid : all_pids()) {
    auto fields = stat_fields(pid);
    if (fields.size() > 1 && process_alive(pid)) children.emplace(std::stoi(fields[1]), pid);
  }
  std::vector<int> out, todo{root};
  while (!todo.empty()) {
    int parent = todo.back();
    todo.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

std::vector<int> processes_mentioning(const std::string& token) {
  std::vector<int> pids;
  for (int pid : all_pids()) {
    if (pid == ::getpid()) continue;
    std::string cmdline = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.find(token) != std::string::npos && process_alive(pid)) pids.push_back(pid);
  }
  return pids;
}

void DaemonHarness::SetUp() {
  ASSERT_TRUE(temp_.ok());
  ASSERT_TRUE(home_temp_.ok());
  dir_ = temp_.path();
  home_ = home_temp_.path() + "/home";
  std::string build = required_env("STACKIE_BUILD_ROOT");
  ASSERT_FALSE(build.empty()) << "meson sets STACKIE_BUILD_ROOT";
  stackied_ = build + "/src/stackied";
  stackie_ = build + "/src/stackie";
  lockbox_ = build + "/src/stackie-lockbox";
  helper_ = required_env("STACKIE_BLOCKHELPER");
  ASSERT_FALSE(helper_.empty()) << "meson sets STACKIE_BLOCKHELPER";
}

void DaemonHarness::TearDown() {
  // A daemon left by a failed test stops its blocks on SIGTERM; SIGKILL only if it hangs.
  for (pid_t pid : std::vector<pid_t>(daemons_)) {
    ::kill(pid, SIGTERM);
    if (wait_exit(pid, 10s) < 0) {
      std::fprintf(stderr, "daemon %d still runs 10 s after SIGTERM: SIGKILL\n", pid);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // The daemons' own account goes with a failure: the temporary directory (and the log in it)
  // is gone afterwards, and a failure seen once in CI must be explainable from its output.
  if (HasFailure()) {
    std::ifstream log(dir_ + "/daemon.log");
    std::fprintf(stderr, "---- %s/daemon.log ----\n", dir_.c_str());
    for (std::string line; std::getline(log, line);) std::fprintf(stderr, "%s\n", line.c_str());
    std::fprintf(stderr, "---- end of daemon.log ----\n");
  }
}

pid_t DaemonHarness::start_daemon() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("STACKIE_HOME", home_.c_str(), 1);
    ::setenv("STACKIE_LOCKBOX", lockbox_.c_str(), 1);
    ::unsetenv("XDG_RUNTIME_DIR");
    for (const auto& [name, value] : daemon_env_) ::setenv(name.c_str(), value.c_str(), 1);
    std::string log = dir_ + "/daemon.log";
    if (!std::freopen(log.c_str(), "a", stderr)) std::_Exit(126);
    ::execl(stackied_.c_str(), stackied_.c_str(), "--foreground", nullptr);
    std::_Exit(127);
  }
  daemons_.push_back(pid);
  return pid;
}

Result<ipc::Client> DaemonHarness::connect_once(ipc::ClientOptions options) {
  return ipc::Client::connect(socket_path(), options);
}

ipc::Client DaemonHarness::connect() {
  for (int i = 0; i < 200; ++i) {
    auto client = ipc::Client::connect(socket_path());
    if (client.ok()) return std::move(*client);
    if (!ipc::is_daemon_not_running(client.error())) {
      ADD_FAILURE() << client.error().message;
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "the daemon never answered on " << socket_path();
  std::abort();  // every caller needs a client; nothing sensible follows
}

Result<ipc::Reply> DaemonHarness::up(const std::string& name, const std::string& yaml) {
  std::string file = dir_ + "/" + name + ".yml";
  std::ofstream(file) << yaml;
  ipc::Client client = connect();
  auto params = Json::object({{"file", file},
                              {"cwd", dir_},
                              {"env", Json::object({{"PATH", "/usr/bin:/bin"}, {"HOME", dir_}})}});
  return client.call("up", params);
}

Json DaemonHarness::ps_blocks(ipc::Client& client) {
  auto reply = client.call("ps");
  EXPECT_TRUE(reply.ok() && reply->ok()) << (reply.ok() ? "" : reply.error().message);
  return reply.ok() && reply->ok() ? reply->result()["blocks"] : Json();
}

int DaemonHarness::wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const int status = testing::wait_exit(pid, timeout);
  if (status >= 0) std::erase(daemons_, pid);
  return status;
}

std::vector<long> DaemonHarness::stamps(const std::string& file) const {
  std::vector<long> out;
  std::ifstream in(file);
  long pid, ms;
  while (in >> pid >> ms) out.push_back(ms);
  return out;
}

}  // namespace stackie::fault
