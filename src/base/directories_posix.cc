#include "base/directories.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace stackie {

Status make_directories(const std::string& path) {
  if (path.empty() || path == "/") return {};
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return {};
    return system_error(ENOTDIR, "cannot create directory " + path);
  }
  if (errno != ENOENT) return system_error(errno, "cannot inspect " + path);
  const std::size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) STACKIE_TRY(make_directories(path.substr(0, slash)));
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return system_error(errno, "cannot create directory " + path);
  return {};
}

Status write_file_atomically(const std::string& path, const std::string& text, int mode) {
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return system_error(errno, "open " + temp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      return system_error(saved, "write " + temp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return system_error(errno, "sync " + temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) return system_error(errno, "rename " + temp);
  return {};
}

namespace {
uint64_t usage_total = 0;  // nftw takes no context pointer; callers run on one thread
}  // namespace

Status remove_tree(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0)
    return errno == ENOENT ? Status{} : system_error(errno, path);
  int failed = ::nftw(
      path.c_str(),
      [](const char* entry, const struct stat*, int, struct FTW*) {
        return ::remove(entry) == 0 || errno == ENOENT ? 0 : -1;
      },
      16, FTW_DEPTH | FTW_PHYS);
  if (failed != 0) return system_error(errno, "cannot remove " + path);
  return {};
}

uint64_t disk_usage(const std::string& path) {
  usage_total = 0;
  ::nftw(
      path.c_str(),
      [](const char*, const struct stat* info, int, struct FTW*) {
        usage_total += static_cast<uint64_t>(info->st_blocks) * 512;
        return 0;
      },
      16, FTW_PHYS);
  return usage_total;
}

}  // namespace stackie
