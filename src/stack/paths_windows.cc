// stack/paths.h on Windows: the home is %LOCALAPPDATA%\stackie (local, not roaming: volumes
// hold databases), and the daemon listens on a named pipe. Pipe names are one namespace for the
// whole machine, so the name carries a hash of the home: two users, or two homes of one user
// (tests), get two daemons. Who may connect is the pipe's DACL (ipc/server_endpoint_windows.cc).
#include <cstdio>

#include "base/fnv1a.h"
#include "stack/file_kind.h"
#include "stack/paths.h"

namespace stackie {
namespace {

// NTFS folds case (ASCII here): "C:/Users/Ana" and "c:/users/ana" are one directory.
std::string case_folded(std::string path) {
  for (char& c : path)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return path;
}

}  // namespace

Result<std::string> default_stackie_home(const Environment& env) {
  auto found = env.find("LOCALAPPDATA");
  if (found == env.end() || !is_absolute_path(slashed_path(found->second)))
    return Error{0, "neither STACKIE_HOME nor an absolute LOCALAPPDATA is set"};
  return join_path(normalize_path(slashed_path(found->second)), "stackie");
}

Result<std::string> default_socket_path(const Environment& env) {
  STACKIE_TRY_ASSIGN(home, stackie_home(env));
  // FNV-1a, 64 bits, of the home as Stackie writes it ("C:/Users/ana/AppData/Local/stackie"),
  // case-folded as the file system folds it. Not a secret: only a distinct, stable name.
  char name[64];
  std::snprintf(name, sizeof name, "\\\\.\\pipe\\stackie-%016llx",
                static_cast<unsigned long long>(fnv1a_64(case_folded(home))));
  return std::string(name);
}

std::string slashed_path(const std::string& path) {
  std::string slashed = path;
  for (char& c : slashed)
    if (c == '\\') c = '/';
  return slashed;
}

std::string account_home_dir() {
  return "";  // USERPROFILE, which users_places reads from the environment
}

std::string account_runtime_dir() {
  return "";
}

std::string path_for_comparison(const std::string& path) {
  return case_folded(
      normalize_path(slashed_path(resolved_path(normalize_path(slashed_path(path))))));
}

}  // namespace stackie
