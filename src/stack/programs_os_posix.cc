#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "stack/programs.h"
#include "stack/programs_os.h"

namespace stackie {

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> expand_glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t matches{};
  if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &matches) == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return version_less(b, a); });
  return out;
}

std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer)) return buffer;
  return path;
}

char search_path_separator() {
  return ':';
}

}  // namespace stackie
