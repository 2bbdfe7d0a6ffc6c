// `stackie daemon install [--socket-activation]` and `stackie daemon uninstall`: write (or
// remove) the files that let the user's service manager run stackied (cli/service_units.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/directories.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/service_units.h"
#include "stack/paths.h"
#include "stack/programs.h"

namespace stackie::cli {

namespace {

// The stackied the service runs: the one next to this stackie (an install prefix, a build
// tree), else the first on PATH. Absolute, because a service manager has its own PATH.
std::string find_daemon_program(const Environment& env) {
  std::string dir = executable_dir();
  if (!dir.empty()) {
    std::string sibling = join_path(dir, "stackied");
    if (::access(sibling.c_str(), X_OK) == 0) return sibling;
  }
  ProgramSearch search;
  search.names = {"stackied"};
  auto path = env.find("PATH");
  if (path != env.end()) search.path = split_search_path(path->second);
  return find_program(search).path;
}

Status write_file(const std::string& path, const std::string& text) {
  size_t slash = path.rfind('/');
  STACKIE_TRY(make_directories(path.substr(0, slash)));
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return system_error(errno, "cannot write " + temp);
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    saved = errno;
  }
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    if (written) saved = errno;
    ::unlink(temp.c_str());
    return system_error(saved, "cannot write " + path);
  }
  return {};
}

// A link made by `systemctl enable` that points at `target` (by absolute or relative path).
bool links_to(const std::string& link, const std::string& target) {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer - 1);
  if (n <= 0) return false;
  std::string points(buffer, static_cast<size_t>(n));
  if (points[0] != '/') points = join_path(link.substr(0, link.rfind('/')), points);
  return normalize_path(points) == normalize_path(target);
}

int report_error(const Error& error) {
  std::fprintf(stderr, "stackie: %s\n", error.message.c_str());
  return kExitFailed;
}

}  // namespace

int run_daemon_install(std::span<char*> argv) {
  bool socket_activation = false;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (std::string_view(argv[i]) == "--socket-activation")
      socket_activation = true;
    else
      return usage_error("daemon", "unexpected argument '" + std::string(argv[i]) + "'");
  }
  Environment env = current_environment();
  ServiceSpec spec;
  spec.daemon_program = find_daemon_program(env);
  if (spec.daemon_program.empty())
    return report_error(Error{0, "stackied is neither next to stackie nor on PATH"});
  auto home = stackie_home(env);
  if (!home.ok()) return report_error(home.error());
  if (auto set = env.find("STACKIE_HOME"); set != env.end() && !set->second.empty())
    spec.stackie_home = *home;
  auto socket = daemon_socket_path();
  if (!socket.ok()) return report_error(socket.error());
  spec.socket_path = *socket;
  if (auto runtime = env.find("XDG_RUNTIME_DIR"); runtime != env.end())
    spec.runtime_dir = runtime->second;
  spec.log_path = daemon_log_file(*home);

  auto plan = plan_service_install(host_os_name(), spec, env, socket_activation);
  if (!plan.ok()) return report_error(plan.error());
  for (const auto& directory : plan->directories)
    if (auto made = make_directories(directory); !made.ok()) return report_error(made.error());
  for (const auto& file : plan->files) {
    if (auto written = write_file(file.path, file.text); !written.ok())
      return report_error(written.error());
    std::printf("wrote %s\n", file.path.c_str());
  }
  // Without XDG_RUNTIME_DIR here, stackie uses HOME/run/stackied.sock; systemd sets it for the
  // service, whose stackied would then listen elsewhere (unless the socket unit passes it ours).
  if (host_os_name() == "linux" && spec.runtime_dir.empty() && !socket_activation &&
      spec.socket_path == join_path(*home, "run/stackied.sock"))
    std::fprintf(stderr,
                 "stackie: warning: XDG_RUNTIME_DIR is not set here but systemd sets it for the "
                 "service, so stackied will listen on $XDG_RUNTIME_DIR/stackie/stackied.sock; "
                 "set socket_path in %s or use --socket-activation\n",
                 config_path(*home).c_str());
  std::printf("enable and start it with:\n");
  for (const auto& command : plan->enable_commands) std::printf("  %s\n", command.c_str());
  return kExitOk;
}

int run_daemon_uninstall(std::span<char*> argv) {
  if (argv.size() > 1)
    return usage_error("daemon", "unexpected argument '" + std::string(argv[1]) + "'");
  Environment env = current_environment();
  auto plan = plan_service_uninstall(host_os_name(), env);
  if (!plan.ok()) return report_error(plan.error());
  int removed = 0;
  for (const auto& link : plan->enable_links) {
    bool ours = false;
    for (const auto& file : plan->files) ours = ours || links_to(link, file);
    if (!ours) continue;
    if (::unlink(link.c_str()) != 0) return report_error(system_error(errno, "remove " + link));
    std::printf("removed %s\n", link.c_str());
    ++removed;
  }
  for (const auto& file : plan->files) {
    if (::unlink(file.c_str()) != 0) {
      if (errno == ENOENT) continue;
      return report_error(system_error(errno, "remove " + file));
    }
    std::printf("removed %s\n", file.c_str());
    ++removed;
  }
  if (removed == 0) {
    std::printf("nothing to remove: stackied is not installed as a service\n");
    return kExitOk;
  }
  std::printf("if it still runs, stop it with:\n");
  for (const auto& command : plan->disable_commands) std::printf("  %s\n", command.c_str());
  return kExitOk;
}

std::string daemon_autostart_note() {
  return "";
}

}  // namespace stackie::cli
