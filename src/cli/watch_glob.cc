#include "cli/watch_glob.h"

#include <fnmatch.h>

#include <string_view>

namespace stackie::cli {

namespace {

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= path.size()) {
    size_t end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    if (end > at && path.compare(at, end - at, ".") != 0) out.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool name_matches(const std::string& glob, const std::string& name) {
  return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

// Whether glob segments [g..] match a leading part of path segments [p..] that ends at a
// segment boundary (a match on a directory takes what is below it).
bool prefix_matches(const std::vector<std::string>& glob, size_t g,
                    const std::vector<std::string>& path, size_t p) {
  if (g == glob.size()) return true;
  if (glob[g] == "**") {
    for (size_t skip = p; skip <= path.size(); ++skip)
      if (prefix_matches(glob, g + 1, path, skip)) return true;
    return false;
  }
  if (p == path.size()) return false;
  return name_matches(glob[g], path[p]) && prefix_matches(glob, g + 1, path, p + 1);
}

}  // namespace

bool glob_matches(const std::string& glob, const std::string& path) {
  std::vector<std::string> glob_parts = split(glob);
  std::vector<std::string> path_parts = split(path);
  if (glob_parts.empty()) return true;  // "." or "./"
  if (glob.find('/') == std::string::npos) {
    for (const auto& name : path_parts)
      if (name_matches(glob, name)) return true;
    return false;
  }
  return prefix_matches(glob_parts, 0, path_parts, 0);
}

bool always_ignored(const std::string& path) {
  for (const auto& name : split(path)) {
    if (name == ".git" || name == ".hg" || name == ".svn" || name == "node_modules" ||
        name == "__pycache__" || name == ".pytest_cache" || name == ".mypy_cache")
      return true;
  }
  std::string_view base = path;
  if (size_t slash = base.rfind('/'); slash != std::string_view::npos)
    base.remove_prefix(slash + 1);
  return base.ends_with("~") || base.ends_with(".swp") || base.ends_with(".swx") ||
         base.ends_with(".pyc") || base.starts_with(".#") || base == "4913";  // vim's probe
}

bool watch_wants(const std::vector<std::string>& paths, const std::vector<std::string>& ignore,
                 const std::string& path) {
  if (always_ignored(path)) return false;
  for (const auto& glob : ignore)
    if (glob_matches(glob, path)) return false;
  for (const auto& glob : paths)
    if (glob_matches(glob, path)) return true;
  return false;
}

}  // namespace stackie::cli
