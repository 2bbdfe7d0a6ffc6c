#include "base/safe_open.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "base/directories.h"

#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

namespace stackie {

namespace {

// "a/b/c" -> {"a", "b", "c"}; empty components (a doubled slash) are skipped. Nullopt for an
// absolute path or a "." / ".." component: a relative path here never climbs.
std::optional<std::vector<std::string>> components(const std::string& relative) {
  std::vector<std::string> out;
  if (!relative.empty() && relative[0] == '/') return std::nullopt;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    std::string name = relative.substr(start, end - start);
    if (name == "." || name == "..") return std::nullopt;
    if (!name.empty()) out.push_back(std::move(name));
    start = end + 1;
  }
  return out;
}

Error symlink_refused(const std::string& shown) {
  return Error{-ELOOP, shown +
                           ": is a symbolic link, in a directory a block can write (its "
                           "storage, a project): refused, a link there is never followed"};
}

// `dir_shown` followed by the first upto+1 components: the path a refusal names.
std::string shown_upto(const std::string& dir_shown, const std::vector<std::string>& parts,
                       size_t upto) {
  std::string out = dir_shown == "/" ? "" : dir_shown;
  for (size_t i = 0; i <= upto && i < parts.size(); ++i) out += "/" + parts[i];
  return out.empty() ? "/" : out;
}

// The portable walk: one component at a time, each checked with lstat and opened O_NOFOLLOW
// (the check names a link; O_NOFOLLOW closes the window between check and open). With
// `create`, missing directories are made 0700 on the way.
Result<UniqueFd> walk(int dir, const std::vector<std::string>& parts, int flags, bool create,
                      const std::string& dir_shown) {
  std::string shown = shown_upto(dir_shown, parts, parts.size());
  UniqueFd current(::fcntl(dir, F_DUPFD_CLOEXEC, 3));
  if (!current.valid()) return system_error(errno, "open " + shown);
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    const char* name = parts[i].c_str();
    std::string here = shown_upto(dir_shown, parts, i);
    struct stat st {};
    if (::fstatat(current.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT || !create) return system_error(errno, here);
      if (::mkdirat(current.get(), name, 0700) != 0 && errno != EEXIST)
        return system_error(errno, "cannot create directory " + here);
      if (::fstatat(current.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return system_error(errno, here);
    }
    if (S_ISLNK(st.st_mode)) return symlink_refused(here);
    if (!last && !S_ISDIR(st.st_mode)) return system_error(ENOTDIR, here);
    int open_flags = last ? flags : (kOpenPathOnly | O_DIRECTORY);
    UniqueFd next(::openat(current.get(), name, open_flags | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      if (errno == ELOOP) return symlink_refused(here);
      return system_error(errno, here);
    }
    // O_PATH | O_NOFOLLOW opens a link itself rather than failing: a link swapped in since
    // the lstat above is caught here.
    if (last && ::fstat(next.get(), &st) == 0 && S_ISLNK(st.st_mode)) return symlink_refused(here);
    current = std::move(next);
  }
  if (parts.empty()) {
    // The directory itself, reopened with the wanted flags.
    UniqueFd self(::openat(current.get(), ".", flags | O_CLOEXEC));
    if (!self.valid()) return system_error(errno, shown);
    return self;
  }
  return current;
}

bool walk_only = false;

#ifdef __linux__
// openat2 confined below `dir` with no symlink at all; nullopt when the kernel lacks it.
std::optional<int> openat2_beneath(int dir, const std::string& relative, int flags) {
  if (walk_only) return std::nullopt;
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd =
      ::syscall(SYS_openat2, dir, relative.empty() ? "." : relative.c_str(), &how, sizeof how);
  if (fd < 0 && (errno == ENOSYS || errno == E2BIG || errno == EPERM)) return std::nullopt;
  return static_cast<int>(fd);
}
#endif

}  // namespace

void force_walk_for_testing(bool walk) {
  walk_only = walk;
}

Result<UniqueFd> open_storage_root(const std::string& path, Privacy privacy) {
  if (path.empty() || path[0] != '/')
    return Error{-EINVAL, "storage root must be an absolute path, got '" + path + "'"};
  STACKIE_TRY(make_directories(path));
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return system_error(errno, "open storage root " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error(errno, "stat " + path);
  if (st.st_uid != ::geteuid())
    return Error{-EPERM, "storage " + path + " belongs to uid " + std::to_string(st.st_uid) +
                             ", not to you (uid " + std::to_string(::geteuid()) +
                             "); refused: another user could read and plant files in it"};
  mode_t forbidden = privacy == Privacy::private_ ? 077 : 022;
  if ((st.st_mode & forbidden) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error{-EPERM, "storage " + path + " has mode " + mode + " (" +
                             (privacy == Privacy::private_ ? "open to group or others"
                                                           : "writable by group or others") +
                             "); refused: make it private (chmod 700) or remove it"};
  }
  return fd;
}

namespace {
std::string shown_below(const std::string& dir_shown, const std::string& relative) {
  if (relative.empty()) return dir_shown;
  return (dir_shown == "/" ? "" : dir_shown) + "/" + relative;
}
}  // namespace

Result<UniqueFd> open_beneath(int dir, const std::string& relative, int flags,
                              const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, relative);
  auto parts = components(relative);
  if (!parts) return Error{-EINVAL, shown + ": not a plain path below its storage root"};
#ifdef __linux__
  if (auto fd = openat2_beneath(dir, relative, flags)) {
    if (*fd >= 0) return UniqueFd(*fd);
    // The walk names the component that was refused (ELOOP: a link; EXDEV: out of `dir`).
    if (errno != ELOOP && errno != EXDEV) return system_error(errno, shown);
  }
#endif
  return walk(dir, *parts, flags, false, dir_shown);
}

Result<UniqueFd> make_directories_beneath(int dir, const std::string& relative,
                                          const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, relative);
  auto parts = components(relative);
  if (!parts) return Error{-EINVAL, shown + ": not a plain path below its storage root"};
  return walk(dir, *parts, O_RDONLY | O_DIRECTORY, true, dir_shown);
}

namespace {

// Empties the directory `fd` (owned here), never following a link.
Status empty_directory(int fd, const std::string& shown) {
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    ::close(fd);
    return system_error(errno, "list " + shown);
  }
  Status result;
  while (dirent* entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string child = shown + "/" + name;
    struct stat st {};
    if (::fstatat(::dirfd(listing), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      int sub =
          ::openat(::dirfd(listing), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        result = system_error(errno, "open " + child);
        break;
      }
      if (Status emptied = empty_directory(sub, child); !emptied.ok()) {
        result = emptied;
        break;
      }
      if (::unlinkat(::dirfd(listing), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        result = system_error(errno, "remove " + child);
        break;
      }
    } else if (::unlinkat(::dirfd(listing), name.c_str(), 0) != 0 && errno != ENOENT) {
      result = system_error(errno, "remove " + child);
      break;
    }
  }
  ::closedir(listing);
  return result;
}

}  // namespace

Status remove_tree_beneath(int dir, const std::string& relative, const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, relative);
  auto parts = components(relative);
  if (!parts || parts->empty())
    return Error{-EINVAL, shown + ": not a plain path below its storage root"};
  std::string parent_rel;
  for (size_t i = 0; i + 1 < parts->size(); ++i) parent_rel += (i ? "/" : "") + (*parts)[i];
  auto parent = open_beneath(dir, parent_rel, kOpenPathOnly | O_DIRECTORY, dir_shown);
  if (!parent.ok()) {
    if (parent.error().code == -ENOENT) return {};
    return parent.error();
  }
  const char* name = parts->back().c_str();
  struct stat st {};
  if (::fstatat(parent->get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? Status{} : system_error(errno, shown);
  if (S_ISDIR(st.st_mode)) {
    int fd = ::openat(parent->get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return system_error(errno, "open " + shown);
    STACKIE_TRY(empty_directory(fd, shown));
    if (::unlinkat(parent->get(), name, AT_REMOVEDIR) != 0 && errno != ENOENT)
      return system_error(errno, "remove " + shown);
    return {};
  }
  if (::unlinkat(parent->get(), name, 0) != 0 && errno != ENOENT)
    return system_error(errno, "remove " + shown);
  return {};
}

Result<UniqueFd> open_file_in(int dir, const std::string& name, int flags,
                              const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, name);
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    return Error{-EINVAL, shown + ": not a plain file name"};
  // O_NONBLOCK for the open only: a FIFO planted in place of the file fails at once (ENXIO)
  // instead of hanging the daemon until someone reads it.
  UniqueFd fd(::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600));
  if (!fd.valid()) {
    if (errno == ELOOP) return symlink_refused(shown);
    return system_error(errno, "open " + shown);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error(errno, "stat " + shown);
  if (!S_ISREG(st.st_mode)) return Error{-EINVAL, shown + ": not a regular file; refused"};
  int status = ::fcntl(fd.get(), F_GETFL);
  if (status >= 0) ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK);
  return fd;
}

Status check_private_file(int fd, const std::string& shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return system_error(errno, "stat " + shown);
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return Error{-EPERM,
                 shown + ": must be a file of yours with mode 0600 (chmod 600 " + shown + ")"};
  return {};
}

Status make_private_file(int fd, const std::string& shown) {
  if (::fchmod(fd, 0600) != 0) return system_error(errno, "chmod 600 " + shown);
  return {};
}

Result<UniqueFd> open_directory(const std::string& path) {
  UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return system_error(errno, "open " + path);
  return dir;
}

Status rename_in(int dir, const std::string& from, const std::string& to,
                 const std::string& dir_shown) {
  if (::renameat(dir, from.c_str(), dir, to.c_str()) != 0)
    return system_error(errno, "rename " + shown_below(dir_shown, from));
  return {};
}

Status remove_file_in(int dir, const std::string& name, const std::string& dir_shown) {
  if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT)
    return system_error(errno, "remove " + shown_below(dir_shown, name));
  return {};
}

bool still_named_in(int fd, int dir, const std::string& name) {
  struct stat held {
  }, named{};
  if (::fstat(fd, &held) != 0 || held.st_nlink == 0) return false;
  if (::fstatat(dir, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) return false;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

bool directory_still_there(int dir) {
  struct stat st {};
  return ::fstat(dir, &st) == 0 && st.st_nlink > 0;
}

uint64_t file_size(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

Status truncate_open_file(int fd, const std::string& shown) {
  if (::ftruncate(fd, 0) != 0) return system_error(errno, "truncate " + shown);
  return {};
}

Status write_and_sync(int fd, std::string_view text, const std::string& shown) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(errno, "write " + shown);
    text.remove_prefix(static_cast<size_t>(n));
  }
  if (::fsync(fd) != 0) return system_error(errno, "sync " + shown);
  return {};
}

}  // namespace stackie
