// Blocking client over a non-blocking socket: every wait is a poll() with a deadline, so no
// call hangs longer than its timeout, and a write never raises SIGPIPE (MSG_NOSIGNAL).
#include "ipc/client.h"

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

bool is_daemon_not_running(const Error& connect_error) {
  return connect_error.code == UV_ENOENT || connect_error.code == UV_ECONNREFUSED;
}

Client::Client(int fd, ClientOptions options)
    : fd_(fd), options_(options), splitter_(options.max_line) {}

Client::Client(Client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      options_(other.options_),
      splitter_(std::move(other.splitter_)),
      pending_lines_(std::move(other.pending_lines_)),
      next_id_(other.next_id_),
      eof_(other.eof_) {}

Client& Client::operator=(Client&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    options_ = other.options_;
    splitter_ = std::move(other.splitter_);
    pending_lines_ = std::move(other.pending_lines_);
    next_id_ = other.next_id_;
    eof_ = other.eof_;
  }
  return *this;
}

Client::~Client() {
  close();
}

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

  if (options.check_server_uid) {
    STACKIE_TRY_ASSIGN(server, peer_credentials(fd));
    if (server.uid != geteuid() && server.uid != 0)
      return Error{UV_EACCES, socket_path + " is served by uid " + std::to_string(server.uid) +
                                  ", not by us; refusing to talk to it"};
  }
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

Status Client::send_raw(std::string_view bytes) {
  return write_all(bytes);
}

Result<RequestId> Client::send(std::string_view method, Json params) {
  Request request;
  request.id = next_id_++;
  request.method = std::string(method);
  request.params = std::move(params);
  STACKIE_TRY(write_all(encode_request(request)));
  return request.id;
}

Result<ServerMessage> Client::read_message(std::chrono::milliseconds timeout) {
  const auto deadline = deadline_after(timeout);
  char buffer[64 * 1024];
  while (pending_lines_.empty()) {
    if (eof_ || fd_ < 0) return Error{UV_EOF, "the daemon closed the connection"};
    STACKIE_TRY_ASSIGN(ready, wait_for(fd_, POLLIN, deadline));
    if (!ready)
      return Error{UV_ETIMEDOUT,
                   "no answer from the daemon within " + std::to_string(timeout.count()) + " ms"};
    const ssize_t received = ::recv(fd_, buffer, sizeof buffer, 0);
    if (received < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (errno == ECONNRESET) {
        eof_ = true;
        continue;
      }
      return system_error(errno, "cannot read from the daemon");
    }
    if (received == 0) {
      eof_ = true;
      continue;
    }
    STACKIE_TRY(
        splitter_.feed(std::string_view(buffer, static_cast<std::size_t>(received)),
                       [this](std::string_view line) { pending_lines_.emplace_back(line); }));
  }
  std::string line = std::move(pending_lines_.front());
  pending_lines_.pop_front();
  return decode_server_message(line, JsonLimits{options_.max_line, 64});
}

Result<Reply> Client::call(std::string_view method, Json params, const EventHandler& on_event) {
  return call(method, std::move(params), on_event, Tick{});
}

Result<Reply> Client::call(std::string_view method, Json params, const EventHandler& on_event,
                           const Tick& tick) {
  auto sent = send(method, std::move(params));
  if (!sent.ok()) {
    // A server that refuses us (another uid, too many connections) says why and hangs up,
    // possibly before our request went out: its reason is worth more than "closed".
    if (sent.error().code == UV_EOF) {
      auto reason = read_message(std::chrono::milliseconds(200));
      if (reason.ok())
        if (auto* reply = std::get_if<Reply>(&*reason); reply && !reply->id) return *reply;
    }
    return sent.take_error();
  }
  const RequestId id = *sent;
  const bool ticking = tick.every.count() > 0 && tick.run;
  const auto idle = options_.idle_timeout;
  auto last_message = std::chrono::steady_clock::now();
  for (;;) {
    auto next = read_message(ticking ? tick.every : idle);
    if (!next.ok() && ticking && next.error().code == UV_ETIMEDOUT) {
      if (idle.count() == 0 || std::chrono::steady_clock::now() - last_message < idle) {
        tick.run();
        continue;
      }
      return Error{UV_ETIMEDOUT,
                   "no answer from the daemon within " + std::to_string(idle.count()) + " ms"};
    }
    STACKIE_TRY_ASSIGN(message, std::move(next));
    last_message = std::chrono::steady_clock::now();
    if (auto* event = std::get_if<Event>(&message)) {
      // Events of another id belong to an earlier call given up on (a timeout): not ours.
      if (event->id == id && on_event) on_event(*event);
      continue;
    }
    auto& reply = std::get<Reply>(message);
    // "id":null: the daemon could not read our request at all; that answer is ours.
    if (!reply.id || *reply.id == id) return std::move(reply);
  }
}

}  // namespace stackie::ipc
