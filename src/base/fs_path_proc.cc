// executable_path() where /proc/self/exe names the running binary (Linux; other POSIX systems
// without /proc get an empty answer).
#include <unistd.h>

#include <climits>

#include "base/fs_path.h"

namespace stackie {

std::string executable_path() {
  char buffer[PATH_MAX];
  ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return length <= 0 ? "" : std::string(buffer, static_cast<size_t>(length));
}

bool is_host_absolute_path(const std::string& path) {
  return !path.empty() && path[0] == '/';
}

}  // namespace stackie
