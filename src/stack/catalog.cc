#include "stack/catalog.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

namespace stackie {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

std::string find_block_file(const std::string& name, const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs)
    for (const char* extension : {".yml", ".yaml"}) {
      std::string candidate = dir + "/" + name + extension;
      if (is_regular_file(candidate)) return candidate;
    }
  return "";
}

std::vector<std::string> catalog_names(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const auto& dir : dirs) {
    DIR* handle = ::opendir(dir.c_str());
    if (!handle) continue;
    while (const dirent* entry = ::readdir(handle)) {
      std::string file = entry->d_name;
      for (std::string extension : {".yml", ".yaml"})
        if (file.size() > extension.size() &&
            file.compare(file.size() - extension.size(), extension.size(), extension) == 0)
          names.push_back(file.substr(0, file.size() - extension.size()));
    }
    ::closedir(handle);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace stackie
