// The Unix-socket transport of the client: blocking calls over a non-blocking socket, every
// wait a poll() with a deadline, so no call hangs longer than its timeout, and a write never
// raises SIGPIPE (send_nosignal: MSG_NOSIGNAL, or SO_NOSIGPIPE where there is none).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "base/posix_io.h"
#include "ipc/client.h"
#include "ipc/peer_cred.h"
#include "ipc/socket_file.h"

namespace stackie::ipc {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline` for poll(): -1 = no deadline.
int poll_timeout(std::optional<Clock::time_point> deadline) {
  if (!deadline) return -1;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

std::optional<Clock::time_point> deadline_after(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) return std::nullopt;
  return Clock::now() + timeout;
}

// Waits until fd is ready for `events`; false on timeout.
Result<bool> wait_for(int fd, short events, std::optional<Clock::time_point> deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int ready = poll(&entry, 1, poll_timeout(deadline));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return system_error(errno, "poll on the daemon socket failed");
  }
}

}  // namespace

void Client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Client> Client::connect(const std::string& socket_path, ClientOptions options) {
  STACKIE_TRY(check_socket_path(socket_path));
  const int fd = socket_cloexec(AF_UNIX, SOCK_STREAM, true);
  if (fd < 0) return system_error(errno, "cannot create a socket");
  Client client(fd, options);

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, socket_path.data(), socket_path.size());
  const auto deadline = deadline_after(options.connect_timeout);
  for (;;) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) break;
    const int error = errno;
    if (error == EINTR) continue;
    if (error == ENOENT)
      return Error{UV_ENOENT, "the daemon is not running (no socket at " + socket_path + ")"};
    if (error == ECONNREFUSED)
      return Error{UV_ECONNREFUSED,
                   "the daemon is not running (nothing accepts on " + socket_path + ")"};
    // A Unix socket whose backlog is full says EAGAIN instead of waiting: retry until the
    // deadline (the daemon is alive, only busy).
    if (error == EAGAIN && poll_timeout(deadline) != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (error == EAGAIN)
      return Error{UV_ETIMEDOUT, "the daemon at " + socket_path + " does not accept connections"};
    return system_error(error, "cannot connect to the daemon at " + socket_path);
  }

  STACKIE_TRY_ASSIGN(server, peer_credentials(fd));
  if (options.check_server_uid && server.uid != geteuid() && server.uid != 0)
    return Error{UV_EACCES, socket_path + " is served by uid " + std::to_string(server.uid) +
                                ", not by us; refusing to talk to it"};
  if (peer_is_exiting(server))
    return Error{UV_ESRCH, "the daemon (pid " + std::to_string(server.pid) +
                               ") is exiting; its socket answers no more"};
  return client;
}

Status Client::write_all(std::string_view bytes) {
  if (fd_ < 0) return Error{UV_EBADF, "the connection to the daemon is closed"};
  const auto deadline = deadline_after(options_.idle_timeout);
  while (!bytes.empty()) {
    const ssize_t sent = send_nosignal(fd_, bytes.data(), bytes.size());
    if (sent > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      STACKIE_TRY_ASSIGN(ready, wait_for(fd_, POLLOUT, deadline));
      if (!ready) return Error{UV_ETIMEDOUT, "the daemon does not read what we send"};
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET)
      return Error{UV_EOF, "the daemon closed the connection"};
    return system_error(errno, "cannot write to the daemon");
  }
  return {};
}

Result<std::optional<std::size_t>> Client::read_some(
    char* buffer, std::size_t size, std::optional<std::chrono::steady_clock::time_point> deadline) {
  for (;;) {
    STACKIE_TRY_ASSIGN(ready, wait_for(fd_, POLLIN, deadline));
    if (!ready) return std::optional<std::size_t>();
    const ssize_t received = ::recv(fd_, buffer, size, 0);
    if (received < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (errno == ECONNRESET) return std::optional<std::size_t>(0);
      return system_error(errno, "cannot read from the daemon");
    }
    return std::optional<std::size_t>(static_cast<std::size_t>(received));
  }
}

}  // namespace stackie::ipc
