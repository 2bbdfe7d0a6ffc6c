#include "base/directories.h"

#include <sys/stat.h>

#include <cerrno>

namespace stackie {

Status make_directories(const std::string& path) {
  if (path.empty() || path == "/") return {};
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return {};
    return system_error(ENOTDIR, "cannot create directory " + path);
  }
  if (errno != ENOENT) return system_error(errno, "cannot inspect " + path);
  const std::size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) STACKIE_TRY(make_directories(path.substr(0, slash)));
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return system_error(errno, "cannot create directory " + path);
  return {};
}

}  // namespace stackie
