// The parts of base/safe_open.h that are the same on every system; the lookups themselves are
// per system (safe_open.cc for POSIX, safe_open_windows.cc).
#include "base/safe_open.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>  // renameat2

#ifdef _WIN32
#include <io.h>  // a UniqueFd there is a CRT descriptor over a HANDLE
#else
#include <unistd.h>
#endif

namespace stackie {

namespace {

void close_fd(int fd) {
#ifdef _WIN32
  ::_close(fd);
#else
  ::close(fd);
#endif
}

}  // namespace

Status rename_in_removing_target(int dir, const std::string& from, const std::string& to,
                                 const std::string& dir_shown) {
#if defined(__linux__)
  if (::renameat2(dir, from.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return {};
  // Only a `to` in the way is removed, never one whose `from` is missing. A removal that fails
  // leaves the rename below to replace it, or to fail, as rename_in always did.
  if (errno == EEXIST) (void)remove_file_in(dir, to, dir_shown);
#endif
  return rename_in(dir, from, to, dir_shown);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close_fd(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close_fd(fd_);
}

std::optional<std::string> path_below(const std::string& root, const std::string& path) {
  if (path == root) return std::string();
  std::string prefix = root.empty() || root.back() == '/' ? root : root + "/";
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  return path.substr(prefix.size());
}

Status replace_file_in(int dir, const std::string& name, std::string_view text,
                       const std::string& dir_shown) {
  const std::string temp = name + ".tmp";
  STACKIE_TRY(remove_file_in(dir, temp, dir_shown));
  Status written;
  {
    STACKIE_TRY_ASSIGN(file, open_file_in(dir, temp, O_WRONLY | O_CREAT | O_EXCL, dir_shown));
    written = write_and_sync(file.get(), text, dir_shown + "/" + temp);
  }  // closed before the rename: Windows renames no open file
  if (!written.ok()) {
    (void)remove_file_in(dir, temp, dir_shown);
    return written;
  }
  return rename_in(dir, temp, name, dir_shown);
}

}  // namespace stackie
