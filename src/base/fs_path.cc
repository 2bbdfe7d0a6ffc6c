#include "base/fs_path.h"

#include <vector>

namespace stackie {

bool has_drive_prefix(const std::string& path) {
  return path.size() >= 2 && path[1] == ':' &&
         ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z'));
}

bool is_absolute_path(const std::string& path) {
  return (!path.empty() && path[0] == '/') ||
         (has_drive_prefix(path) && path.size() >= 3 && (path[2] == '/' || path[2] == '\\'));
}

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.back() == '/') return b.front() == '/' ? a + b.substr(1) : a + b;
  return b.front() == '/' ? a + b : a + "/" + b;
}

std::string normalize_path(const std::string& absolute) {
  // A Windows absolute path in Stackie's form ("C:/x") keeps its drive: the rest is as below.
  if (has_drive_prefix(absolute)) return absolute.substr(0, 2) + normalize_path(absolute.substr(2));
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= absolute.size()) {
    size_t end = absolute.find('/', start);
    if (end == std::string::npos) end = absolute.size();
    std::string part = absolute.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (const auto& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string executable_dir() {
  std::string path = executable_path();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string relocated_prefix(const std::string& exe_dir, const std::string& bindir) {
  if (!is_absolute_path(exe_dir) || bindir.empty() || bindir[0] == '/') return "";
  std::string dir = normalize_path(exe_dir);
  std::string suffix = "/" + normalize_path("/" + bindir).substr(1);
  if (suffix == "/" || dir.size() < suffix.size() ||
      dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  std::string prefix = dir.substr(0, dir.size() - suffix.size());
  return prefix.empty() ? "/" : prefix;
}

std::string relocated_install_dir(const std::string& dir) {
#ifdef STACKIE_INSTALL_BINDIR
  if (dir.empty() || dir[0] == '/') return "";
  std::string prefix = relocated_prefix(executable_dir(), STACKIE_INSTALL_BINDIR);
  return prefix.empty() ? "" : join_path(prefix, dir);
#else
  (void)dir;
  return "";
#endif
}

}  // namespace stackie
