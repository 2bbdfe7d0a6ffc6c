#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "base/posix_io.h"
#include "supervisor/host_os.h"

namespace stackie {

unsigned helper_process_flags() {
  return UV_PROCESS_DETACHED;  // its own process group, killed as one
}

void signal_helper(int pid, int signum) {
  ::kill(-pid, signum);
}

size_t read_pipe_now(const uv_pipe_t* pipe, char* buffer, size_t size) {
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(pipe), &fd) != 0) return 0;
  ssize_t n = ::read(fd, buffer, size);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

size_t grow_pipe_to(const uv_pipe_t* pipe, size_t bytes) {
  uv_os_fd_t fd;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(pipe), &fd) != 0) return 0;
  if (!grow_pipe(fd, static_cast<int>(bytes))) return 0;
  return static_cast<size_t>(pipe_capacity(fd, 0));
}

std::string trusted_runtime_dir() {
  // XDG_RUNTIME_DIR is the session's private directory by its specification; a value pointing
  // elsewhere (another user's directory, a shared /tmp) is not trusted with the storage.
  const char* value = std::getenv("XDG_RUNTIME_DIR");
  if (value == nullptr || value[0] != '/') return "";
  struct stat info {};
  if (::stat(value, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid() &&
      (info.st_mode & 077) == 0)
    return value;
  return "";
}

long clock_ticks_per_second() {
  return ::sysconf(_SC_CLK_TCK);
}

Status lock_instance(int fd, const std::string& shown) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
  if (errno == EWOULDBLOCK) return Error{UV_EBUSY, shown + " is locked"};
  return system_error(errno, "lock " + shown);
}

}  // namespace stackie
