// POSIX: the process's environment (environ, getcwd, isatty), and stackied started with
// posix_spawn.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "base/fs_path.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/daemon_process.h"

extern char** environ;

namespace stackie::cli {

namespace {

// stackied next to the running stackie (a build tree, an install prefix), else from PATH.
std::string daemon_program() {
  std::string dir = executable_dir();
  if (!dir.empty()) {
    std::string sibling = dir + "/stackied";
    if (access(sibling.c_str(), X_OK) == 0) return sibling;
  }
  return "stackied";
}

}  // namespace

Status spawn_daemon() {
  std::string program = daemon_program();
  char* argv[] = {program.data(), nullptr};
  pid_t pid = 0;
  int rc = program.find('/') == std::string::npos
               ? posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv, environ)
               : posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, environ);
  if (rc != 0) return Error{-rc, "cannot start " + program + ": " + std::strerror(rc)};
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  return Error{-ECHILD, program + " exited with status " +
                            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status)
                                                             : 128 + WTERMSIG(status)) +
                            " (see its log in $STACKIE_HOME)"};
}

Environment current_environment() {
  Environment env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

Result<std::string> current_directory() {
  char buffer[PATH_MAX];
  if (!getcwd(buffer, sizeof buffer))
    return system_error(errno, "cannot get the current directory");
  return std::string(buffer);
}

bool stdout_is_tty() {
  return isatty(STDOUT_FILENO) == 1;
}

}  // namespace stackie::cli
