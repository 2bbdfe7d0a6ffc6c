#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/posix_io.h"

namespace stackie {

namespace {

bool set_flags(int fd, bool nonblock) {
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return false;
  if (!nonblock) return true;
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

void close_keeping_errno(int fd) {
  int saved = errno;
  ::close(fd);
  errno = saved;
}

// SO_NOSIGPIPE is the BSD way to what MSG_NOSIGNAL does per call on Linux.
void no_sigpipe(int fd) {
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
}

}  // namespace

int socket_cloexec(int domain, int type, bool nonblock) {
  int fd = ::socket(domain, type, 0);
  if (fd < 0) return -1;
  if (!set_flags(fd, nonblock)) {
    close_keeping_errno(fd);
    return -1;
  }
  no_sigpipe(fd);
  return fd;
}

int pipe_cloexec(int fds[2], bool nonblock) {
  if (::pipe(fds) != 0) return -1;
  if (!set_flags(fds[0], nonblock) || !set_flags(fds[1], nonblock)) {
    close_keeping_errno(fds[0]);
    close_keeping_errno(fds[1]);
    return -1;
  }
  return 0;
}

ssize_t send_nosignal(int fd, const void* data, size_t size, int flags) {
  no_sigpipe(fd);
  return ::send(fd, data, size, flags);
}

ssize_t sendto_nosignal(int fd, const void* data, size_t size, const sockaddr* to,
                        socklen_t to_size) {
  no_sigpipe(fd);
  return ::sendto(fd, data, size, 0, to, to_size);
}

ssize_t recvmsg_cloexec(int fd, msghdr* message, int flags) {
  ssize_t n = ::recvmsg(fd, message, flags);
  if (n < 0) return n;
  for (cmsghdr* header = CMSG_FIRSTHDR(message); header != nullptr;
       header = CMSG_NXTHDR(message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* fds = reinterpret_cast<const int*>(CMSG_DATA(header));
    for (size_t i = 0; i < count; ++i) ::fcntl(fds[i], F_SETFD, FD_CLOEXEC);
  }
  return n;
}

bool grow_pipe(int, int) {
  return false;  // macOS sizes pipes itself (up to 64 KiB)
}

int pipe_capacity(int, int fallback) {
  return fallback;
}

uint64_t file_birth_us(int dir, const char* name) {
  struct stat info {};
  const int failed =
      name[0] == '\0' ? ::fstat(dir, &info) : ::fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW);
  if (failed != 0) return 0;
  return static_cast<uint64_t>(info.st_birthtimespec.tv_sec) * 1000000 +
         static_cast<uint64_t>(info.st_birthtimespec.tv_nsec) / 1000;
}

}  // namespace stackie
