#include "sandbox/confined_roots.h"

#include <fcntl.h>
#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>

namespace stackie {

namespace {

#ifdef O_PATH
constexpr int kLookupOnly = O_PATH;
#else
// No O_PATH (macOS): a plain open, which of a FIFO the block planted would wait for a writer.
constexpr int kLookupOnly = O_RDONLY | O_NONBLOCK;
#endif

// `path` as the host resolves it, except through a magic link of /proc: /proc/self/fd/N (or a
// link to it) is a descriptor of this launcher's, such as the storage root it holds open, and
// under Landlock a grant of it was a grant of every block's volumes. openat2 says so where the
// kernel has it (5.6; Landlock needs 5.13); elsewhere only the namespaces backend runs, whose
// binds from /proc end up under the sandbox's own /proc.
Result<UniqueFd> open_following_no_magic_link(const std::string& path) {
#ifdef __linux__
  struct open_how how {};
  how.flags = kLookupOnly | O_CLOEXEC;
  how.resolve = RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  if (errno == ELOOP)
    return Error{-EPERM, path +
                             ": is reached through a link of /proc (the launcher's own "
                             "processes and descriptors), or too many links: refused"};
  if (errno != ENOSYS) return Error{-errno, path};
#endif
  UniqueFd opened(::open(path.c_str(), kLookupOnly | O_CLOEXEC));
  if (!opened.valid()) return Error{-errno, path};
  return opened;
}

}  // namespace

Result<ConfinedRoots> ConfinedRoots::open(const SandboxPolicy& policy) {
  std::vector<std::string> paths = policy.link_free_roots;
  if (!policy.storage_root.empty()) paths.push_back(policy.storage_root);
  // Shortest first: a root is kept only when no kept root holds it already.
  std::sort(paths.begin(), paths.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  ConfinedRoots out;
  for (const auto& path : paths) {
    bool inside_another = std::any_of(out.roots_.begin(), out.roots_.end(), [&](const Root& root) {
      return path_below(root.path, path).has_value();
    });
    if (inside_another) continue;
    int fd = ::open(path.c_str(), kLookupOnly | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      // Missing, or a file (a volume of one file): nothing below it to reach.
      if ((errno == ENOENT || errno == ENOTDIR) && path != policy.storage_root) continue;
      return Error{-errno, "open " + path + " (a directory the block can write)"};
    }
    out.roots_.push_back({path, UniqueFd(fd)});
  }
  return out;
}

Result<UniqueFd> ConfinedRoots::open_path(const std::string& path) const {
  for (const auto& root : roots_) {
    auto below = path_below(root.path, path);
    if (!below) continue;
    if (below->empty()) {
      int fd = ::fcntl(root.fd.get(), F_DUPFD_CLOEXEC, 0);
      if (fd < 0) return Error{-errno, path};
      return UniqueFd(fd);
    }
    return open_beneath(root.fd.get(), *below, kLookupOnly, root.path);
  }
  return open_following_no_magic_link(path);
}

bool ConfinedRoots::holds(const std::string& path) const {
  return std::any_of(roots_.begin(), roots_.end(),
                     [&](const Root& root) { return path_below(root.path, path).has_value(); });
}

}  // namespace stackie
