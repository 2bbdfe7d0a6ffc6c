#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/posix_io.h"

namespace stackie {

int socket_cloexec(int domain, int type, bool nonblock) {
  return ::socket(domain, type | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
}

int pipe_cloexec(int fds[2], bool nonblock) {
  return ::pipe2(fds, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
}

ssize_t send_nosignal(int fd, const void* data, size_t size, int flags) {
  return ::send(fd, data, size, flags | MSG_NOSIGNAL);
}

ssize_t sendto_nosignal(int fd, const void* data, size_t size, const sockaddr* to,
                        socklen_t to_size) {
  return ::sendto(fd, data, size, MSG_NOSIGNAL, to, to_size);
}

ssize_t recvmsg_cloexec(int fd, msghdr* message, int flags) {
  return ::recvmsg(fd, message, flags | MSG_CMSG_CLOEXEC);
}

bool grow_pipe(int fd, int bytes) {
  return ::fcntl(fd, F_SETPIPE_SZ, bytes) >= 0;
}

int pipe_capacity(int fd, int fallback) {
  int size = ::fcntl(fd, F_GETPIPE_SZ);
  return size > 0 ? size : fallback;
}

uint64_t file_birth_us(int dir, const char* name) {
  struct statx info {};
  const int flags = AT_SYMLINK_NOFOLLOW | (name[0] == '\0' ? AT_EMPTY_PATH : 0);
  if (::statx(dir, name, flags, STATX_BTIME, &info) != 0 || !(info.stx_mask & STATX_BTIME))
    return 0;
  return static_cast<uint64_t>(info.stx_btime.tv_sec) * 1000000 + info.stx_btime.tv_nsec / 1000;
}

}  // namespace stackie
