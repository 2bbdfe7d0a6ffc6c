// read_env_file on POSIX: below the stack's directory, opened from its fd without following a
// symlink anywhere on the way (base/safe_open.h); elsewhere, the file itself is not a symlink.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/safe_open.h"
#include "stack/env_file.h"

namespace stackie {

Result<std::string> read_env_file(const std::string& path, const std::string& trusted_dir) {
  auto below = path_below(trusted_dir, path);
  UniqueFd fd;
  if (below && !below->empty()) {
    UniqueFd dir(::open(trusted_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) return system_error(errno, path + ": cannot read: open " + trusted_dir);
    auto opened = open_beneath(dir.get(), *below, O_RDONLY | O_NONBLOCK | O_NOCTTY, trusted_dir);
    if (!opened.ok())
      return Error{opened.error().code, path + ": cannot read: " + opened.error().message};
    fd = std::move(*opened);
  } else {
    fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
      int saved = errno;
      if (saved == ELOOP)
        return Error{-saved, path + ": cannot read: it is a symlink (name the file it points to)"};
      return system_error(saved, path + ": cannot read");
    }
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return system_error(errno, path + ": cannot read");
  if (!S_ISREG(info.st_mode)) return Error{-EINVAL, path + ": not a regular file"};
  if (static_cast<size_t>(info.st_size) > kMaxEnvFileSize)
    return Error{-EFBIG, path + ": larger than 1 MiB; not an env file"};
  std::string text;
  char buffer[8192];
  while (text.size() <= kMaxEnvFileSize) {
    ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return system_error(errno, path + ": cannot read");
    if (got == 0) return text;
    text.append(buffer, static_cast<size_t>(got));
  }
  return Error{-EFBIG, path + ": larger than 1 MiB; not an env file"};
}

}  // namespace stackie
