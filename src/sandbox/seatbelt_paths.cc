#include "sandbox/seatbelt_paths.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/confined_roots.h"

namespace stackie {

namespace {

// The real path of the open file `fd`, or "" when the system does not say.
std::string real_path_of(int fd) {
  char buffer[PATH_MAX];
#ifdef F_GETPATH
  if (::fcntl(fd, F_GETPATH, buffer) == 0) return buffer;
  return {};
#else
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  return std::string(buffer, static_cast<size_t>(n));
#endif
}

// The real path of `path`: of its longest prefix that `reach` finds, then the rest as written
// (the profile allows those components once they are made).
template <typename Reach>
Result<std::string> real_path(const std::string& path, Reach reach) {
  std::string existing = path;
  std::string rest;
  for (;;) {
    auto found = reach(existing);
    if (found) return *found + rest;
    if (found.error().code != -ENOENT && found.error().code != -ENOTDIR) return found.error();
    size_t slash = existing.rfind('/');
    if (slash == std::string::npos || slash == 0) return path;
    rest = existing.substr(slash) + rest;
    existing.resize(slash);
  }
}

}  // namespace

Result<SandboxPolicy> seatbelt_resolve_paths(SandboxPolicy policy) {
  auto roots = ConfinedRoots::open(policy);
  if (!roots) return roots.error();
  auto real = [&](const std::string& path) -> Result<std::string> {
    if (roots->holds(path))
      return real_path(path, [&](const std::string& p) -> Result<std::string> {
        auto fd = roots->open_path(p);
        if (!fd) return fd.error();
        std::string found = real_path_of(fd->get());
        if (found.empty()) return system_error(errno, "the real path of " + p);
        return found;
      });
    return real_path(path, [](const std::string& p) -> Result<std::string> {
      char buffer[PATH_MAX];
      // The user's own path, resolved as far as the host lets us, whatever stops it.
      if (::realpath(p.c_str(), buffer) == nullptr) return Error{-ENOENT, p};
      return std::string(buffer);
    });
  };
  auto resolve = [&](std::string& path) -> Status {
    if (path.empty() || path[0] != '/') return {};
    auto found = real(path);
    if (!found) return found.error();
    path = *found;
    return {};
  };
  for (auto* binds : {&policy.read_only, &policy.read_write})
    for (auto& bind : *binds)
      if (auto done = resolve(bind.source); !done) return done.error();
  if (auto done = resolve(policy.host_tmp_dir); !done) return done.error();
  for (auto& path : policy.no_create)
    if (auto done = resolve(path); !done) return done.error();
  return policy;
}

}  // namespace stackie
