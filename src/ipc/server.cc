// The libuv IPC server. Ownership: the server's map owns each Connection (shared_ptr); every
// write in flight also holds one, so a connection's memory outlives its cancelled writes. libuv
// handles are owned by UvHandle and freed in their close callbacks. Sessions hold a Call that
// only weakly refers to its connection: a session outliving its client is a harmless no-op.
#include "ipc/server.h"

#include <uv.h>

#include <map>
#include <vector>

#include "base/uv_handle.h"
#include "ipc/server_endpoint.h"

namespace stackie::ipc {

struct Connection;

namespace detail {

struct Call {
  std::weak_ptr<Connection> connection;
  RequestId id = 0;
  std::uint64_t serial = 0;
  PeerCredentials peer;
  bool answered = false;
  std::uint64_t skipped = 0;          // events dropped since the last one that went out
  std::shared_ptr<SessionSink> sink;  // set: not on the socket (Session::with_sink)
};

// Serials are unique across every server and sink of the process (handlers key on them).
static std::uint64_t next_serial() {
  static std::uint64_t next = 1;
  return next++;
}

}  // namespace detail

namespace {

constexpr std::size_t kReadBufferSize = 64 * 1024;

}  // namespace

struct Server::Impl {
  Impl(uv_loop_t* loop_in, Handler& handler_in, ServerOptions options_in)
      : loop(loop_in), handler(handler_in), options(std::move(options_in)) {}

  Status start_listener();
  void accept_connection();
  bool evict_idle(const PeerCredentials& newcomer);
  Status bind_endpoint(const std::string& path);
  void rebind_lost_endpoint();
  void connection_closed(std::uint64_t serial);
  void release_socket_file();
  void fire_on_closed();
  std::size_t active_connections() const;
  void log(LogLevel level, const std::string& message) const {
    if (options.log) options.log(level, message);
  }

  uv_loop_t* loop;
  Handler& handler;
  ServerOptions options;
  UvHandle<uv_pipe_t> listener;
  std::map<std::uint64_t, std::shared_ptr<Connection>> connections;
  std::uint64_t next_connection_serial = 1;
  std::string socket_path;
  std::unique_ptr<Endpoint> endpoint;  // what listen() made on the system, released on close
  bool closing = false;
  std::function<void()> on_closed;
};

struct Connection : std::enable_shared_from_this<Connection> {
  Connection(Server::Impl* server_in, std::uint64_t serial_in)
      : server(server_in),
        serial(serial_in),
        limits(server_in->options.limits),
        splitter(limits.max_line),
        read_buffer(new char[kReadBufferSize]) {}

  void start_reading();
  void stop_reading();
  bool peer_hung_up() const;
  // Bytes we still hold because the socket would not take them yet, or because this loop turn's
  // events are corked: what the limits count (what the kernel already took is the client's to
  // read, not our memory).
  std::size_t backlog() const {
    return closed ? 0 : uv_stream_get_write_queue_size(pipe.stream()) + corked.size();
  }
  void on_read(ssize_t nread, const uv_buf_t* buffer);
  void on_line(std::string_view line);
  void enqueue(std::string line);
  void enqueue_event(std::string line);
  void flush_corked();
  void on_written(std::size_t bytes, int status);
  void flush_skipped(detail::Call& call);
  void answer(detail::Call& call, std::string line);
  void refuse(std::string_view code, const std::string& message);
  void close_gracefully(bool server_stopping);
  void close_now();
  std::vector<std::shared_ptr<detail::Call>> take_pending();

  Server::Impl* server;  // nullptr once the server is gone
  std::uint64_t serial;
  ServerLimits limits;
  LineSplitter splitter;
  std::unique_ptr<char[]> read_buffer;
  UvHandle<uv_pipe_t> pipe;
  UvHandle<uv_timer_t> linger;  // only while closing with writes queued
  UvHandle<uv_timer_t> quiet;   // until the first request: first_request_ms
  // Events of one loop turn leave in one write, at the start of the next turn: a follower of a
  // block that floods its output would otherwise cost a write(2) per line, which slowed the
  // block itself (issue 25). A reply flushes at once, after what is corked (order is kept).
  std::string corked;
  UvHandle<uv_idle_t> next_turn;
  bool requested = false;  // sent at least one request
  PeerCredentials peer;
  bool first_read_checked = false;  // first_read_refusal asked (Windows: the client's token)
  std::map<std::uint64_t, std::shared_ptr<detail::Call>> pending;  // unanswered
  std::size_t queued_bytes = 0;  // handed to uv_write, not yet called back (the drain waits)
  bool reading = false;
  bool read_paused = false;  // stopped because the client does not read what we write
  bool peer_done = false;    // EOF: the client sends nothing more
  bool closing = false;      // no new requests; closes once the writes drain
  bool closed = false;
};

namespace {

struct WriteRequest {
  uv_write_t request{};
  std::string data;
  std::shared_ptr<Connection> connection;
};

void on_alloc(uv_handle_t* handle, std::size_t, uv_buf_t* buffer) {
  auto* connection = static_cast<Connection*>(handle->data);
  if (!connection) {
    *buffer = uv_buf_init(nullptr, 0);
    return;
  }
  *buffer = uv_buf_init(connection->read_buffer.get(), kReadBufferSize);
}

void on_read_callback(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buffer) {
  if (auto* connection = static_cast<Connection*>(stream->data)) connection->on_read(nread, buffer);
}

void on_write_callback(uv_write_t* request, int status) {
  auto* write = static_cast<WriteRequest*>(request->data);
  std::shared_ptr<Connection> connection = std::move(write->connection);
  const std::size_t bytes = write->data.size();
  delete write;
  connection->on_written(bytes, status);
}

void on_connection_callback(uv_stream_t* listener, int status) {
  auto* server = static_cast<Server::Impl*>(listener->data);
  if (!server) return;
  if (status < 0) {
    server->log(LogLevel::warning, std::string("ipc: accept failed: ") + uv_strerror(status));
    return;
  }
  server->accept_connection();
}

}  // namespace

// ---------------------------------------------------------------- Connection

void Connection::start_reading() {
  if (reading || closing || peer_done) return;
  const int status = uv_read_start(pipe.stream(), on_alloc, on_read_callback);
  if (status < 0) {
    close_now();
    return;
  }
  reading = true;
}

void Connection::stop_reading() {
  if (!reading) return;
  uv_read_stop(pipe.stream());
  reading = false;
}

bool Connection::peer_hung_up() const {
  return ipc::peer_hung_up(pipe.get());
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buffer) {
  auto self = shared_from_this();  // a handler may drop this connection
  if (nread == 0) return;
  if (nread < 0) {
    if (nread != UV_EOF) {
      close_now();
      return;
    }
    // EOF is either a client that left (close) or one that only stopped sending and waits
    // for its answers (shutdown(SHUT_WR), as `socat` does). Only the first hangs up both ways:
    // then unanswered sessions must go dead now (a `logs -f` stopped by Ctrl-C), not at the
    // next event that fails to write.
    if (peer_hung_up()) {
      close_now();
      return;
    }
    peer_done = true;
    stop_reading();
    if (pending.empty()) close_gracefully(false);
    return;
  }
  if (closing) return;
  if (!first_read_checked) {
    first_read_checked = true;
    if (std::string refusal = first_read_refusal(pipe.get()); !refusal.empty()) {
      if (server)
        server->log(LogLevel::warning, "ipc: refused a client at its first request (" +
                                           describe(peer) + "): " + refusal);
      refuse(errc::kPermissionDenied, refusal);
      return;
    }
  }
  const Status fed = splitter.feed(std::string_view(buffer->base, static_cast<std::size_t>(nread)),
                                   [this](std::string_view line) {
                                     if (!closing) on_line(line);
                                   });
  if (!fed.ok() && !closing) {
    if (server)
      server->log(LogLevel::info,
                  "ipc: dropped a client (" + describe(peer) + "): " + fed.error().message);
    refuse(errc::kTooLarge, fed.error().message);
  }
}

void Connection::on_line(std::string_view line) {
  if (!requested) {
    requested = true;
    quiet.close();
  }
  auto decoded = decode_request(line, JsonLimits{limits.max_line, limits.max_depth});
  if (auto* rejected = std::get_if<RejectedRequest>(&decoded)) {
    enqueue(encode_error(rejected->id, rejected->error.code, rejected->error.message));
    return;
  }
  Request& request = std::get<Request>(decoded);
  if (pending.size() >= limits.max_pending_requests) {
    enqueue(encode_error(request.id, errc::kBusy,
                         "too many requests in flight on this connection (the limit is " +
                             std::to_string(limits.max_pending_requests) + ")"));
    return;
  }
  if (!server) return;
  auto call = std::make_shared<detail::Call>();
  call->connection = weak_from_this();
  call->id = request.id;
  call->serial = detail::next_serial();
  call->peer = peer;
  pending.emplace(call->serial, call);
  server->handler.on_request(Session(call), request);
}

void Connection::enqueue(std::string line) {
  if (closed) return;
  if (!corked.empty()) {
    corked += line;
    flush_corked();
    return;
  }
  auto* write = new WriteRequest;
  write->data = std::move(line);
  write->connection = shared_from_this();
  write->request.data = write;
  const std::size_t bytes = write->data.size();
  uv_buf_t buffer = uv_buf_init(write->data.data(), static_cast<unsigned>(bytes));
  const int status = uv_write(&write->request, pipe.stream(), &buffer, 1, on_write_callback);
  if (status < 0) {
    delete write;
    close_now();
    return;
  }
  queued_bytes += bytes;
  // Backpressure: a client that sends without reading is not read any further until it does.
  if (backlog() > limits.max_write_queue && reading) {
    stop_reading();
    read_paused = true;
  }
}

void Connection::enqueue_event(std::string line) {
  if (closed) return;
  if (corked.empty()) {
    if (!next_turn &&
        (!server ||
         next_turn.init([&](uv_idle_t* idle) { return uv_idle_init(server->loop, idle); }, this) <
             0)) {
      enqueue(std::move(line));  // no loop to wait on: write now
      return;
    }
    uv_idle_start(next_turn.get(), [](uv_idle_t* idle) {
      auto* connection = static_cast<Connection*>(idle->data);
      auto self = connection->shared_from_this();  // a failed write drops the connection
      connection->flush_corked();
    });
  }
  corked += line;
}

void Connection::flush_corked() {
  if (next_turn) uv_idle_stop(next_turn.get());
  if (corked.empty()) return;
  std::string batch;
  batch.swap(corked);
  enqueue(std::move(batch));
}

void Connection::on_written(std::size_t bytes, int status) {
  queued_bytes -= bytes;
  if (closed) return;
  if (status < 0) {  // EPIPE, ECONNRESET: the client is gone
    close_now();
    return;
  }
  if (closing) {
    if (queued_bytes == 0) close_now();
    return;
  }
  if (read_paused && backlog() <= limits.max_write_queue / 2) {
    read_paused = false;
    start_reading();
  }
}

void Connection::flush_skipped(detail::Call& call) {
  if (call.skipped == 0) return;
  enqueue(encode_event(call.id, "skipped", Json::object({{"count", call.skipped}})));
  call.skipped = 0;
}

void Connection::answer(detail::Call& call, std::string line) {
  auto self = shared_from_this();
  call.answered = true;
  pending.erase(call.serial);
  flush_skipped(call);
  // Judge the client by what it has left unread, not by this reply's size: one big reply to a
  // client that keeps up is fine.
  if (backlog() > 2 * limits.max_write_queue) {
    if (server)
      server->log(LogLevel::warning, "ipc: dropped a client (" + describe(peer) +
                                         ") that does not read its replies (" +
                                         std::to_string(backlog()) + " bytes queued)");
    close_now();
    return;
  }
  enqueue(std::move(line));
  if (peer_done && pending.empty()) close_gracefully(false);
}

void Connection::refuse(std::string_view code, const std::string& message) {
  enqueue(encode_error(std::nullopt, code, message));
  close_gracefully(false);
}

std::vector<std::shared_ptr<detail::Call>> Connection::take_pending() {
  std::vector<std::shared_ptr<detail::Call>> calls;
  for (auto& [call_serial, call] : pending) {
    call->answered = true;
    calls.push_back(call);
  }
  pending.clear();
  return calls;
}

void Connection::close_gracefully(bool server_stopping) {
  if (closing || closed) return;
  auto self = shared_from_this();
  closing = true;
  stop_reading();
  flush_corked();
  const auto abandoned = take_pending();
  if (server_stopping)
    for (const auto& call : abandoned)
      enqueue(encode_error(call->id, errc::kShuttingDown, "the daemon is stopping"));
  if (server)
    for (const auto& call : abandoned) server->handler.on_close(Session(call));
  if (closed) return;
  if (queued_bytes == 0) {
    close_now();
    return;
  }
  // Let the last replies drain, but never wait on a client that stopped reading.
  if (!server || linger.init([&](uv_timer_t* timer) { return uv_timer_init(server->loop, timer); },
                             this) < 0) {
    close_now();
    return;
  }
  uv_timer_start(
      linger.get(),
      [](uv_timer_t* timer) {
        if (auto* connection = static_cast<Connection*>(timer->data)) connection->close_now();
      },
      limits.close_drain_ms, 0);
}

void Connection::close_now() {
  if (closed) return;
  auto self = shared_from_this();
  closed = true;
  closing = true;
  reading = false;
  const auto abandoned = take_pending();
  pipe.close();  // cancels queued writes: their callbacks run with UV_ECANCELED
  corked.clear();
  next_turn.close();
  linger.close();
  quiet.close();
  if (!server) return;
  for (const auto& call : abandoned) server->handler.on_close(Session(call));
  if (server) server->connection_closed(serial);
}

// ---------------------------------------------------------------- Session

Session Session::with_sink(std::shared_ptr<SessionSink> sink, RequestId id) {
  auto call = std::make_shared<detail::Call>();
  call->id = id;
  call->serial = detail::next_serial();
  call->sink = std::move(sink);
  return Session(std::move(call));
}

bool Session::alive() const {
  if (!call_ || call_->answered) return false;
  if (call_->sink) return call_->sink->open();
  auto connection = call_->connection.lock();
  return connection && !connection->closing;
}

bool Session::takes_events() const {
  if (!call_ || call_->answered) return false;
  if (call_->sink) return call_->sink->open();
  auto connection = call_->connection.lock();
  return connection && !connection->closing &&
         connection->backlog() < connection->limits.max_write_queue;
}

void Session::skip_events(std::uint64_t count) {
  if (!call_ || call_->answered || call_->sink) return;
  auto connection = call_->connection.lock();
  if (connection && !connection->closing &&
      connection->backlog() >= connection->limits.max_write_queue)
    call_->skipped += count;
}

RequestId Session::id() const {
  return call_ ? call_->id : 0;
}

std::uint64_t Session::serial() const {
  return call_ ? call_->serial : 0;
}

const PeerCredentials& Session::peer() const {
  static const PeerCredentials kNobody;
  return call_ ? call_->peer : kNobody;
}

namespace {

// The one body of Session::event and event_lazily: make_data() (for a sink) or encode() (for
// a client) runs only for an event sent.
template <class MakeData, class Encode>
EventOutcome send_event(detail::Call* call, std::string_view name, MakeData&& make_data,
                        Encode&& encode) {
  if (!call || call->answered) return EventOutcome::gone;
  if (call->sink) {
    if (!call->sink->open()) return EventOutcome::gone;
    return call->sink->event(name, [&]() -> Json { return make_data(); });
  }
  auto connection = call->connection.lock();
  if (!connection || connection->closing) return EventOutcome::gone;
  if (connection->backlog() >= connection->limits.max_write_queue) {
    ++call->skipped;
    return EventOutcome::skipped;
  }
  connection->flush_skipped(*call);
  connection->enqueue_event(encode(call->id));
  return connection->closed ? EventOutcome::gone : EventOutcome::sent;
}

template <class MakeData>
EventOutcome send_event(detail::Call* call, std::string_view name, MakeData&& make_data) {
  return send_event(call, name, make_data,
                    [&](RequestId id) { return encode_event(id, name, make_data()); });
}

}  // namespace

EventOutcome Session::event(std::string_view name, const Json& data) {
  return send_event(call_.get(), name, [&data]() -> const Json& { return data; });
}

EventOutcome Session::event_lazily(std::string_view name, const std::function<Json()>& make_data) {
  return send_event(call_.get(), name, make_data);
}

EventOutcome Session::event_lazily(std::string_view name, const std::function<Json()>& make_data,
                                   const std::function<void(std::string&)>& write_data) {
  return send_event(call_.get(), name, make_data,
                    [&](RequestId id) { return encode_event(id, name, write_data); });
}

void Session::reply(const Json& result) {
  if (!call_ || call_->answered) return;
  if (call_->sink) {
    call_->answered = true;
    if (call_->sink->open()) call_->sink->reply(result);
    return;
  }
  auto connection = call_->connection.lock();
  if (!connection || connection->closing) return;
  connection->answer(*call_, encode_result(call_->id, result));
}

void Session::fail(std::string_view code, std::string_view message, const Json& data) {
  if (!call_ || call_->answered) return;
  if (call_->sink) {
    call_->answered = true;
    if (call_->sink->open())
      call_->sink->fail(RemoteError{std::string(code), std::string(message), data});
    return;
  }
  auto connection = call_->connection.lock();
  if (!connection || connection->closing) return;
  connection->answer(*call_, encode_error(call_->id, code, message, data));
}

// ---------------------------------------------------------------- Server::Impl

Status Server::Impl::start_listener() {
  const int init =
      listener.init([&](uv_pipe_t* pipe) { return uv_pipe_init(loop, pipe, 0); }, this);
  if (init < 0) return Error{init, std::string("cannot create the listener: ") + uv_strerror(init)};
  return {};
}

std::size_t Server::Impl::active_connections() const {
  std::size_t count = 0;
  for (const auto& [serial, connection] : connections)
    if (!connection->closing) ++count;
  return count;
}

void Server::Impl::accept_connection() {
  auto connection = std::make_shared<Connection>(this, next_connection_serial++);
  const int init = connection->pipe.init(
      [&](uv_pipe_t* pipe) { return uv_pipe_init(loop, pipe, 0); }, connection.get());
  if (init < 0) {
    log(LogLevel::warning, std::string("ipc: cannot accept: ") + uv_strerror(init));
    return;
  }
  if (const int status = uv_accept(listener.stream(), connection->pipe.stream()); status < 0) {
    log(LogLevel::warning, std::string("ipc: accept failed: ") + uv_strerror(status));
    return;  // the connection's destructor closes its pipe
  }
  connections.emplace(connection->serial, connection);

  auto peer = accepted_peer(connection->pipe.get());
  if (!peer) {
    log(LogLevel::warning, "ipc: refused a connection: " + peer.error().message);
    connection->close_now();
    return;
  }
  connection->peer = *peer;
  if (std::string refusal = refusal_for(*peer, options); !refusal.empty()) {
    log(LogLevel::warning,
        "ipc: refused a connection from another user (" + describe(*peer) + "): " + refusal);
    connection->refuse(errc::kPermissionDenied, refusal);
    return;
  }
  if (active_connections() > options.limits.max_connections && !evict_idle(*peer)) {
    log(LogLevel::warning, "ipc: refused a connection (" + describe(*peer) +
                               "): " + std::to_string(options.limits.max_connections) +
                               " connections already, the limit");
    connection->refuse(errc::kBusy, "too many connections to the daemon (the limit is " +
                                        std::to_string(options.limits.max_connections) + ")");
    return;
  }
  connection->start_reading();
  if (connection->quiet.init([&](uv_timer_t* timer) { return uv_timer_init(loop, timer); },
                             connection.get()) < 0)
    return;
  uv_timer_start(
      connection->quiet.get(),
      [](uv_timer_t* timer) {
        auto* idle = static_cast<Connection*>(timer->data);
        if (idle == nullptr || idle->requested || idle->closing) return;
        if (idle->server)
          idle->server->log(LogLevel::info, "ipc: closed a connection (" + describe(idle->peer) +
                                                ") that sent no request");
        idle->refuse(errc::kBusy, "no request within " +
                                      std::to_string(idle->limits.first_request_ms) +
                                      " ms: connection closed");
      },
      options.limits.first_request_ms, 0);
}

// The reserve: the oldest connection that has nothing in flight (never asked anything, or
// answered and now silent) makes room. False when every connection waits for an answer.
bool Server::Impl::evict_idle(const PeerCredentials& newcomer) {
  for (auto& [serial, connection] : connections) {
    if (connection->closing || !connection->pending.empty() || !connection->reading) continue;
    log(LogLevel::info, "ipc: closed an idle connection (" + describe(connection->peer) +
                            ") to make room for a new client (" + describe(newcomer) + ")");
    connection->refuse(errc::kBusy,
                       "closed to make room for a new client: the daemon is at its "
                       "connection limit and this connection had nothing in flight");
    return true;
  }
  return false;
}

void Server::Impl::connection_closed(std::uint64_t serial) {
  connections.erase(serial);
  if (closing && connections.empty()) fire_on_closed();
}

void Server::Impl::fire_on_closed() {
  auto callback = std::move(on_closed);
  on_closed = nullptr;
  if (callback) callback();
}

void Server::Impl::release_socket_file() {
  if (endpoint) endpoint->release();
  endpoint.reset();
}

// ---------------------------------------------------------------- Server

Server::Server(uv_loop_s* loop, Handler& handler, ServerOptions options)
    : impl_(std::make_unique<Impl>(loop, handler, std::move(options))) {}

Server::~Server() {
  if (!impl_->closing) close();
  impl_->on_closed = nullptr;
  auto connections = std::move(impl_->connections);
  impl_->connections.clear();
  for (auto& [serial, connection] : connections) {
    connection->server = nullptr;
    connection->close_now();
  }
}

Status Server::listen(const std::string& socket_path) {
  if (impl_->listener || impl_->closing)
    return Error{UV_EINVAL, "the IPC server is already listening or closed"};
  STACKIE_TRY(impl_->bind_endpoint(socket_path));
  return {};
}

Status Server::Impl::bind_endpoint(const std::string& path) {
  STACKIE_TRY(start_listener());
  auto bound = listen_endpoint(listener.get(), path, on_connection_callback, options.log);
  if (!bound) {
    listener.close();
    return bound.take_error();
  }
  socket_path = path;
  endpoint = std::move(*bound);
  // The address is the daemon's only one: should it vanish under a running daemon (a socket
  // file deleted with its directory, or by a cleanup of $XDG_RUNTIME_DIR), no client could
  // reach it and a new daemon could not start beside it, so it is bound again at once.
  endpoint->watch(
      loop, [this] { rebind_lost_endpoint(); }, options.log);
  return {};
}

// Called from the endpoint's own watch callback: the endpoint is released and replaced here,
// and its callback returns without touching itself again.
void Server::Impl::rebind_lost_endpoint() {
  if (closing || !endpoint) return;
  log(LogLevel::warning, "ipc: the socket " + socket_path + " is gone: binding it again");
  listener.close();
  endpoint->release();  // the lock; the file only if it is still ours (it is not)
  endpoint.reset();
  if (auto bound = bind_endpoint(socket_path); !bound)
    log(LogLevel::warning, "ipc: cannot bind " + socket_path + " again: " + bound.error().message);
}

Status Server::listen_fd(int fd) {
  if (impl_->listener || impl_->closing)
    return Error{UV_EINVAL, "the IPC server is already listening or closed"};
  STACKIE_TRY(impl_->start_listener());
  if (auto adopted = adopt_listening_fd(impl_->listener.get(), fd, on_connection_callback);
      !adopted) {
    impl_->listener.close();  // closes fd too when uv_pipe_open took it
    return adopted;
  }
  return {};
}

void Server::close(std::function<void()> on_closed) {
  Impl& impl = *impl_;
  if (impl.closing) {
    // Already closing: run this callback too, when (or as soon as) it is done.
    if (!on_closed) return;
    if (impl.connections.empty()) {
      on_closed();
      return;
    }
    impl.on_closed = [first = std::move(impl.on_closed), second = std::move(on_closed)] {
      if (first) first();
      second();
    };
    return;
  }
  impl.closing = true;
  impl.on_closed = std::move(on_closed);
  impl.listener.close();
  impl.release_socket_file();
  std::vector<std::shared_ptr<Connection>> connections;
  for (auto& [serial, connection] : impl.connections) connections.push_back(connection);
  for (auto& connection : connections) connection->close_gracefully(true);
  if (impl.connections.empty()) impl.fire_on_closed();
}

bool Server::closing() const {
  return impl_->closing;
}

std::size_t Server::connection_count() const {
  return impl_->connections.size();
}

const std::string& Server::socket_path() const {
  return impl_->socket_path;
}

}  // namespace stackie::ipc
