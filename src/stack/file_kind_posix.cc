#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "stack/file_kind.h"

namespace stackie {

bool is_file_or_directory_itself(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && (S_ISREG(info.st_mode) || S_ISDIR(info.st_mode));
}

bool is_link(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
}

std::optional<long long> status_change_ns(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
#ifdef __APPLE__
  const struct timespec& changed = info.st_ctimespec;
#else
  const struct timespec& changed = info.st_ctim;
#endif
  return static_cast<long long>(changed.tv_sec) * 1000000000LL + changed.tv_nsec;
}

bool is_missing(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) != 0 && errno == ENOENT;
}

std::string resolved_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer)) return buffer;
  return path;
}

}  // namespace stackie
