#include "lockbox_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/sandbox_probe.h"
#include "sandbox/linux_launch.h"

extern char** environ;

namespace stackie::testing {

std::string lockbox_path() {
  return STACKIE_LOCKBOX_PATH;
}
std::string probe_path() {
  return STACKIE_PROBE_PATH;
}

namespace {

std::string& backend_slot() {
  // STACKIE_TEST_LOCKBOX_BACKEND=landlock runs a whole suite under the landlock backend.
  static std::string backend = [] {
    const char* env = std::getenv("STACKIE_TEST_LOCKBOX_BACKEND");
    return std::string(env ? env : "");
  }();
  return backend;
}

// The lockbox and the probe's bind: the landlock backend shows the probe at its own path.
std::vector<std::string> lockbox_prefix() {
  std::vector<std::string> argv = {lockbox_path()};
  const std::string& backend = backend_slot();
  if (!backend.empty()) argv.insert(argv.end(), {"--backend", backend});
  if (backend == "landlock")
    argv.insert(argv.end(), {"--ro", probe_path()});
  else
    argv.insert(argv.end(), {"--ro", probe_path() + ":/probe"});
  return argv;
}

}  // namespace

std::string probe_inside() {
  return backend_slot() == "landlock" ? probe_path() : "/probe";
}
bool landlock_backend() {
  return backend_slot() == "landlock";
}
bool kernel_has_landlock() {
  return landlock_abi_version() >= 1;
}

void use_backend(const std::string& backend) {
  backend_slot() = backend;
}
const std::string& current_backend() {
  return backend_slot();
}

std::string trim(const std::string& text) {
  size_t end = text.find_last_not_of(" \n");
  return end == std::string::npos ? "" : text.substr(0, end + 1);
}

RunResult run(const std::vector<std::string>& given, const RunOptions& options) {
  std::vector<std::string> argv = given;
  if (!argv.empty() && argv[0] == lockbox_path() && !backend_slot().empty() &&
      std::find(argv.begin(), argv.end(), "--backend") == argv.end())
    argv.insert(argv.begin() + 1, {"--backend", backend_slot()});
  int in[2], out[2], err[2], efd[2];
  pipe2(in, O_CLOEXEC);
  pipe2(out, O_CLOEXEC);
  pipe2(err, O_CLOEXEC);
  pipe2(efd, O_CLOEXEC);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (options.with_error_fd) posix_spawn_file_actions_adddup2(&actions, efd[1], 3);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& e : options.extra_env) env_strings.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  if (options.leak_fd >= 0) fcntl(options.leak_fd, F_SETFD, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  close(efd[1]);
  RunResult result;
  if (rc != 0) {
    result.err = std::string("spawn: ") + std::strerror(rc);
    return result;
  }
  if (!options.stdin_data.empty())
    (void)!write(in[1], options.stdin_data.data(), options.stdin_data.size());
  close(in[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeout_ms);
  pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {efd[0], POLLIN, 0}};
  std::string* sinks[3] = {&result.out, &result.err, &result.error_fd};
  int open_count = 3;
  bool timed_out = false;
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 3, static_cast<int>(left)) <= 0) continue;
    for (int i = 0; i < 3; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char buffer[4096];
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      } else {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!timed_out)
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

RunResult run_probe(const std::vector<std::string>& lockbox_args,
                    const std::vector<std::string>& probe_args, const RunOptions& options) {
  std::vector<std::string> argv = lockbox_prefix();
  argv.insert(argv.end(), lockbox_args.begin(), lockbox_args.end());
  argv.push_back("--");
  argv.push_back(probe_inside());
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  return run(argv, options);
}

Background::Background(const std::vector<std::string>& probe_args,
                       const std::vector<std::string>& flags, const std::string& program) {
  int out[2];
  pipe2(out, O_CLOEXEC);
  std::vector<std::string> argv = lockbox_prefix();
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.push_back(program == "/probe" ? probe_inside() : program);
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  argv_ = argv;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  out_ = out[0];
}

Background::~Background() {
  if (pid_ > 0) {
    // A landlock monitor has no pid namespace to take its block along: SIGKILLed, it would
    // leave the block's processes (a fork bomb's 30) running on the host after the test. Its
    // tree-kill signal ends them first; SIGKILL stays the last word.
    if (landlock_backend()) {
      kill(pid_, linux_sandbox::kTreeKillSignal);
      for (int waited_ms = 0; waited_ms < 5000; waited_ms += 10) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        usleep(10 * 1000);
      }
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  close(out_);
}

int Background::wait_exit() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool Background::at_eof() {
  pollfd p{out_, POLLIN, 0};
  while (!eof_ && poll(&p, 1, 0) == 1) {
    char buffer[512];
    ssize_t n = read(out_, buffer, sizeof buffer);
    if (n <= 0)
      eof_ = true;
    else
      seen_.append(buffer, static_cast<size_t>(n));
  }
  return eof_;
}

bool Background::read_until(const std::string& text, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (seen_.find(text) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buffer[512];
    ssize_t n = read(out_, buffer, sizeof buffer);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    seen_.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace stackie::testing
