// stack/paths.h on Linux and macOS: the home is in $HOME, the daemon's socket under it.
#include <pwd.h>
#include <unistd.h>

#include "stack/file_kind.h"
#include "stack/paths.h"

namespace stackie {

Result<std::string> default_stackie_home(const Environment& env) {
  auto found = env.find("HOME");
  if (found == env.end() || found->second.empty() || found->second[0] != '/')
    return Error{0, "neither STACKIE_HOME nor an absolute HOME is set"};
  return join_path(normalize_path(found->second), ".stackie");
}

Result<std::string> default_socket_path(const Environment& env) {
  auto runtime = env.find("XDG_RUNTIME_DIR");
  if (runtime != env.end() && !runtime->second.empty() && runtime->second[0] == '/')
    return join_path(runtime->second, "stackie/stackied.sock");
  STACKIE_TRY_ASSIGN(home, stackie_home(env));
  return join_path(home, "run/stackied.sock");
}

std::string slashed_path(const std::string& path) {
  return path;
}

std::string account_home_dir() {
  const struct passwd* account = ::getpwuid(::getuid());
  return account && account->pw_dir ? account->pw_dir : "";
}

std::string account_runtime_dir() {
#ifdef __linux__
  return "/run/user/" + std::to_string(::getuid());
#else
  return "";
#endif
}

std::string path_for_comparison(const std::string& path) {
  return normalize_path(resolved_path(normalize_path(path)));
}

}  // namespace stackie
