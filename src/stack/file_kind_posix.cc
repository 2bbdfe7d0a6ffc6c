#include <sys/stat.h>

#include "stack/file_kind.h"

namespace stackie {

bool is_file_or_directory_itself(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && (S_ISREG(info.st_mode) || S_ISDIR(info.st_mode));
}

}  // namespace stackie
