// Descriptor calls whose atomic flags Linux has and macOS lacks (SOCK_CLOEXEC, SOCK_NONBLOCK,
// pipe2, MSG_NOSIGNAL, MSG_CMSG_CLOEXEC). One file per platform: posix_io_linux.cc sets the
// flags in the call, posix_io_bsd.cc right after it. Stackie's processes do not fork from a
// second thread, so the gap between the call and the flag cannot leak a descriptor.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>

namespace stackie {

// A socket that is close-on-exec (and non-blocking with `nonblock`); -1 with errno on failure.
int socket_cloexec(int domain, int type, bool nonblock = false);

// pipe(2) with both ends close-on-exec (and non-blocking with `nonblock`); 0 or -1 with errno.
int pipe_cloexec(int fds[2], bool nonblock = false);

// send/sendto that never raise SIGPIPE (EPIPE instead).
ssize_t send_nosignal(int fd, const void* data, size_t size, int flags = 0);
ssize_t sendto_nosignal(int fd, const void* data, size_t size, const sockaddr* to,
                        socklen_t to_size);

// recvmsg whose received descriptors (SCM_RIGHTS) are close-on-exec.
ssize_t recvmsg_cloexec(int fd, msghdr* message, int flags);

// Grows a pipe to `bytes` (Linux F_SETPIPE_SZ); false where pipes cannot grow.
bool grow_pipe(int fd, int bytes);
// A pipe's capacity in bytes, or `fallback` where it cannot be asked.
int pipe_capacity(int fd, int fallback);

// When `name` in directory `dir` (or `dir` itself, for "") was made, in microseconds since the
// epoch, links not followed; 0 where the file system does not keep it or the call fails. With
// the inode it tells a file from a newer one that was given a deleted file's inode.
uint64_t file_birth_us(int dir, const char* name);

}  // namespace stackie
