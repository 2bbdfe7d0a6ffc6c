// The socket file's life on disk, apart from libuv so each rule is testable on its own: the
// length check, the private directory, the lock that keeps two daemons from racing, the stale
// socket left by a killed daemon, and the bind with the right mode.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie::ipc {

// sockaddr_un::sun_path holds 108 bytes on Linux (104 on macOS) with the terminating NUL: a
// longer path would be truncated by the kernel, so it is an error here (UV_ENAMETOOLONG),
// naming the path, its length and the limit. A relative path is refused too (UV_EINVAL).
Status check_socket_path(std::string_view path);

// Creates `dir` (and missing parents) with mode 0700 when absent. Refuses a directory that is a
// symlink, is not owned by our euid, or is open to group/others (UV_EACCES, saying how to fix).
Status ensure_private_directory(const std::string& dir);

// Opens and flocks "<socket_path>.lock" (0600) without waiting; a held lock is "another daemon
// is running" (UV_EADDRINUSE). Returns the fd, to keep open for as long as the socket serves.
Result<int> lock_socket_path(const std::string& socket_path);

// Nothing at the path: false. A socket nobody accepts on (a killed daemon's): removed, true. A
// socket that accepts: "another daemon is running" (UV_EADDRINUSE). Anything that is not a
// socket is left alone and refused (UV_EEXIST).
Result<bool> remove_stale_socket(const std::string& socket_path);

// socket + bind + chmod 0600 + listen. The caller owns the returned fd.
Result<int> bind_listening_socket(const std::string& socket_path, int backlog);

// Is fd a listening Unix stream socket (for socket activation)?
Status check_listening_unix_socket(int fd);

}  // namespace stackie::ipc
