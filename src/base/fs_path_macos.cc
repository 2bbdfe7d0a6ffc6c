// executable_path() on macOS (fs_path.h).
#include <limits.h>
#include <mach-o/dyld.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/fs_path.h"

namespace stackie {

// macOS has no /proc: dyld knows the path the program was started by, which may hold
// symlinks or "..", so it is resolved.
std::string executable_path() {
  char self[PATH_MAX];
  uint32_t size = sizeof self;
  if (_NSGetExecutablePath(self, &size) != 0) return {};
  char real[PATH_MAX];
  return ::realpath(self, real) ? std::string(real) : std::string(self);
}

bool is_host_absolute_path(const std::string& path) {
  return !path.empty() && path[0] == '/';
}

}  // namespace stackie
