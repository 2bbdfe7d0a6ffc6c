#include "ipc/socket_file.h"

#include "base/directories.h"
#include "base/posix_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace stackie::ipc {

namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  assert(path.size() < sizeof address.sun_path);
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

}  // namespace

Status check_socket_path(std::string_view path) {
  constexpr std::size_t kMax = sizeof(sockaddr_un::sun_path) - 1;
  if (path.empty() || path.front() != '/')
    return Error{UV_EINVAL, "the daemon socket path must be absolute: '" + std::string(path) + "'"};
  if (path.size() > kMax)
    return Error{UV_ENAMETOOLONG, "the daemon socket path is " + std::to_string(path.size()) +
                                      " bytes, more than the " + std::to_string(kMax) +
                                      " a Unix socket allows: " + std::string(path) +
                                      " (use a shorter STACKIE_HOME or set XDG_RUNTIME_DIR)"};
  return {};
}

Status ensure_private_directory(const std::string& dir) {
  STACKIE_TRY(make_directories(dir));
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0) return system_error(errno, "cannot inspect " + dir);
  if (S_ISLNK(info.st_mode))
    return Error{UV_EACCES, "the socket directory " + dir + " is a symlink; refusing to use it"};
  if (!S_ISDIR(info.st_mode))
    return Error{UV_EACCES, "the socket directory " + dir + " is not a directory"};
  if (info.st_uid != geteuid())
    return Error{UV_EACCES, "the socket directory " + dir + " belongs to uid " +
                                std::to_string(info.st_uid) + ", not to us (uid " +
                                std::to_string(geteuid()) + "); refusing to use it"};
  if ((info.st_mode & 077) != 0)
    return Error{UV_EACCES, "the socket directory " + dir + " has mode " +
                                octal_mode(info.st_mode) +
                                ", open to other users; it must be 0700 (chmod 700 " + dir + ")"};
  return {};
}

Result<int> lock_socket_path(const std::string& socket_path) {
  const std::string lock_path = socket_path + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return system_error(errno, "cannot open " + lock_path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK)
      return Error{UV_EADDRINUSE, "another daemon is running (it holds " + lock_path + ")"};
    return system_error(error, "cannot lock " + lock_path);
  }
  return fd;
}

Result<bool> remove_stale_socket(const std::string& socket_path) {
  struct stat info {};
  if (lstat(socket_path.c_str(), &info) != 0) {
    if (errno == ENOENT) return false;
    return system_error(errno, "cannot inspect " + socket_path);
  }
  if (!S_ISSOCK(info.st_mode))
    return Error{UV_EEXIST, socket_path + " exists and is not a socket; not replacing it"};

  const int probe = socket_cloexec(AF_UNIX, SOCK_STREAM, true);
  if (probe < 0) return system_error(errno, "cannot create a socket");
  const sockaddr_un address = unix_address(socket_path);
  const int rc = connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int error = rc == 0 ? 0 : errno;
  ::close(probe);
  // EAGAIN: the backlog is full, so someone is listening (just slowly).
  if (rc == 0 || error == EAGAIN || error == EINPROGRESS)
    return Error{UV_EADDRINUSE,
                 "another daemon is running (" + socket_path + " accepts connections)"};
  if (error != ECONNREFUSED) return system_error(error, "cannot probe " + socket_path);
  if (unlink(socket_path.c_str()) != 0 && errno != ENOENT)
    return system_error(errno, "cannot remove the stale socket " + socket_path);
  return true;
}

Result<int> bind_listening_socket(const std::string& socket_path, int backlog) {
  STACKIE_TRY(check_socket_path(socket_path));
  const int fd = socket_cloexec(AF_UNIX, SOCK_STREAM);
  if (fd < 0) return system_error(errno, "cannot create a socket");
  const sockaddr_un address = unix_address(socket_path);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    return system_error(error, "cannot bind " + socket_path);
  }
  // The directory is 0700 already; 0600 on the socket is the second lock on the door.
  if (chmod(socket_path.c_str(), 0600) != 0 || ::listen(fd, backlog) != 0) {
    const int error = errno;
    ::close(fd);
    unlink(socket_path.c_str());
    return system_error(error, "cannot set up " + socket_path);
  }
  return fd;
}

Status check_listening_unix_socket(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return system_error(errno, "fd " + std::to_string(fd) + " is not a socket");
  int type = 0, listening = 0;
  length = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0) type = 0;
  length = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0) listening = 0;
  if (address.ss_family != AF_UNIX || type != SOCK_STREAM || !listening)
    return Error{UV_EINVAL, "fd " + std::to_string(fd) + " is not a listening Unix stream socket"};
  return {};
}

}  // namespace stackie::ipc
