// Reading /proc in tests, shared by the supervisor and fault suites.
#pragma once

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

}  // namespace stackie::testing_proc
