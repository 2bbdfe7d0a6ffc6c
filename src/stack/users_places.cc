#include "stack/users_places.h"

#include <algorithm>
#include <cstdlib>

#include "base/fs_path.h"
#include "stack/file_kind.h"

namespace stackie {

std::vector<UserPlace> users_places(const Environment& env, const std::string& project) {
  std::vector<UserPlace> out;
  auto add = [&](const std::string& what, const std::string& dir) {
    if (!is_host_absolute_path(dir)) return;
    std::string normal = normalize_path(dir);
    const bool root =
        normal == "/" || (normal.size() <= 3 && normal.size() >= 2 && normal[1] == ':');
    if (root) return;
    for (const auto& place : out)
      if (place.dir == normal) return;
    out.push_back({what, std::move(normal)});
  };
  auto from_env = [&](const char* name) {
    auto found = env.find(name);
    return found == env.end() ? std::string() : found->second;
  };
  auto own = [](const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
  };
  for (const char* name : {"HOME", "USERPROFILE"}) {
    add("your home directory", from_env(name));
    add("your home directory", own(name));
  }
  add("your home directory", account_home_dir());
  add("your runtime directory", from_env("XDG_RUNTIME_DIR"));
  add("your runtime directory", own("XDG_RUNTIME_DIR"));
  add("your runtime directory", account_runtime_dir());
  for (const char* name : {"TMPDIR", "TEMP", "TMP"}) {
    add("the temp directory", from_env(name));
    add("the temp directory", own(name));
  }
#ifndef _WIN32
  for (const char* dir : {"/tmp", "/var/tmp", "/dev/shm"}) add("the temp directory", dir);
  for (const char* dir : {"/run", "/var/run"}) add("the system's run directory (its sockets)", dir);
  for (const char* dir : {"/media", "/mnt", "/Volumes"}) add("the mounted drives", dir);
#endif
  add("the project", project);
  std::stable_sort(out.begin(), out.end(), [](const UserPlace& a, const UserPlace& b) {
    return a.dir.size() > b.dir.size();
  });
  return out;
}

std::string resolved_through_existing(const std::string& normal) {
  std::string existing = normal;
  std::string rest;
  while (is_missing(existing)) {
    const size_t slash = existing.rfind('/');
    if (slash == std::string::npos || slash == 0) return path_for_comparison(normal);
    rest = existing.substr(slash) + rest;
    existing.resize(slash);
  }
  return normalize_path(path_for_comparison(existing) + rest);
}

}  // namespace stackie
