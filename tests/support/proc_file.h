// Reading /proc in tests, shared by the supervisor and fault suites.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace stackie::testing_proc {

// The whole of a /proc file, or "" when it cannot be read. Not an ifstream: libstdc++ throws
// from underflow when read(2) fails, which it does (ESRCH) for a process that exits meanwhile.
inline std::string read_proc_file(const std::string& path) {
  std::string content;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) content.append(buffer, size_t(n));
  ::close(fd);
  return content;
}

// The processes that share `pid`'s user namespace (a sandbox's monitor, its pid 1 and all of
// its block), counted from outside: a block cannot lie about it. -1 when `pid` is gone.
inline int processes_in_user_ns_of(int pid) {
  char link[64];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/ns/user").c_str(), link, 63);
  if (n <= 0) return -1;
  std::string wanted(link, static_cast<size_t>(n));
  int count = 0;
  DIR* proc = ::opendir("/proc");
  while (dirent* entry = proc ? ::readdir(proc) : nullptr) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    char ns[64];
    std::string path = std::string("/proc/") + entry->d_name + "/ns/user";
    ssize_t len = ::readlink(path.c_str(), ns, 63);
    if (len > 0 && std::string(ns, static_cast<size_t>(len)) == wanted) ++count;
  }
  if (proc) ::closedir(proc);
  return count;
}

}  // namespace stackie::testing_proc
