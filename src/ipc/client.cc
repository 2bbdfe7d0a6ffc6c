// The client's protocol side: requests out, lines in, events and the reply of each call. The
// transport (connect, write_all, read_some, close) is per platform: client_unix.cc (a Unix
// socket), client_windows.cc (a named pipe).
#include "ipc/client.h"

#include <uv.h>

#include <optional>
#include <utility>

namespace stackie::ipc {

bool is_daemon_not_running(const Error& connect_error) {
  return connect_error.code == UV_ENOENT || connect_error.code == UV_ECONNREFUSED;
}

bool is_daemon_exiting(const Error& connect_error) {
  return connect_error.code == UV_ESRCH;
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
  STACKIE_TRY_ASSIGN(line, read_line(timeout));
  return decode_server_message(line, JsonLimits{options_.max_line, 64});
}

Result<std::string> Client::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = timeout.count() > 0 ? std::optional<std::chrono::steady_clock::time_point>(
                                                  std::chrono::steady_clock::now() + timeout)
                                            : std::nullopt;
  char buffer[64 * 1024];
  while (pending_lines_.empty()) {
    if (eof_ || fd_ < 0) return Error{UV_EOF, "the daemon closed the connection"};
    STACKIE_TRY_ASSIGN(received, read_some(buffer, sizeof buffer, deadline));
    if (!received)
      return Error{UV_ETIMEDOUT,
                   "no answer from the daemon within " + std::to_string(timeout.count()) + " ms"};
    if (*received == 0) {
      eof_ = true;
      continue;
    }
    STACKIE_TRY(splitter_.feed(std::string_view(buffer, *received), [this](std::string_view line) {
      pending_lines_.emplace_back(line);
    }));
  }
  std::string line = std::move(pending_lines_.front());
  pending_lines_.pop_front();
  return line;
}

Result<Reply> Client::call(std::string_view method, Json params, const EventHandler& on_event) {
  return call(method, std::move(params), on_event, Tick{});
}

Result<Reply> Client::call(std::string_view method, Json params, const EventHandler& on_event,
                           const Tick& tick) {
  return call(method, std::move(params), on_event, tick, LineTaker{});
}

Result<Reply> Client::call(std::string_view method, Json params, const EventHandler& on_event,
                           const LineTaker& take_line) {
  return call(method, std::move(params), on_event, Tick{}, take_line);
}

Result<Reply> Client::call(std::string_view method, Json params, const EventHandler& on_event,
                           const Tick& tick, const LineTaker& take_line) {
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
    auto line = read_line(ticking ? tick.every : idle);
    if (!line.ok() && ticking && line.error().code == UV_ETIMEDOUT) {
      if (idle.count() == 0 || std::chrono::steady_clock::now() - last_message < idle) {
        tick.run();
        continue;
      }
      return Error{UV_ETIMEDOUT,
                   "no answer from the daemon within " + std::to_string(idle.count()) + " ms"};
    }
    STACKIE_TRY_ASSIGN(text, std::move(line));
    last_message = std::chrono::steady_clock::now();
    if (take_line && take_line(id, text)) continue;
    STACKIE_TRY_ASSIGN(message, decode_server_message(text, JsonLimits{options_.max_line, 64}));
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
