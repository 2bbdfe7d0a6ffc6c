// The daemon's end of the IPC protocol: a libuv Unix-socket (Windows: named pipe) server (DESIGN.md
// §7). It owns the socket file (0700 directory, 0600 socket, stale-socket replacement, path-length
// check), checks every peer's uid, frames and decodes requests, enforces the limits, and hands each
// request to a Handler as a Session: a handle that can send events and exactly one final reply, and
// that goes dead when the client disconnects. Modules never print: refusals and drops go to the log
// hook. The server never exits or stalls because of a client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/json.h"
#include "ipc/framing.h"
#include "ipc/peer_cred.h"
#include "ipc/protocol.h"

struct uv_loop_s;  // libuv's uv_loop_t; server.cc includes <uv.h>

namespace stackie::ipc {

struct ServerLimits {
  // At the limit, a new client takes the place of the oldest connection with no request in
  // flight (it is closed); only when every connection has one (an `up` waiting, a `logs -f`)
  // is the new client refused `busy`. So connections that only sit there cannot lock the CLI
  // out (issue 15).
  std::size_t max_connections = 64;
  // A connection that sent no request within this is closed: a client connects to ask.
  std::uint64_t first_request_ms = 5000;
  std::size_t max_pending_requests = 32;  // unanswered requests per connection; more => busy
  std::size_t max_line = kDefaultMaxLine;
  std::size_t max_depth = 64;
  // Bytes waiting to be written to one client. Beyond it the connection stops reading (a client
  // that sends without reading slows only itself), events are skipped (the client later gets
  // {"event":"skipped","data":{"count":N}}), and replies still queue until twice this much is
  // waiting; a reply due past that drops the client.
  std::size_t max_write_queue = std::size_t{4} << 20;
  // How long close() lets queued replies drain (e.g. the reply to daemon.stop) before it drops
  // the connections.
  std::uint64_t close_drain_ms = 1000;
};

enum class LogLevel { info, warning };
using LogHook = std::function<void(LogLevel level, std::string_view message)>;

struct ServerOptions {
  ServerLimits limits;
  LogHook log;                               // refusals, drops, write errors; may be empty
  std::optional<std::uint32_t> allowed_uid;  // POSIX: the only peer uid served; default: our euid
};

enum class EventOutcome {
  sent,     // queued for the client
  skipped,  // the client is too slow: dropped and counted (it will be told how many)
  gone,     // the client went away or the request was already answered: stop streaming
};

namespace detail {
struct Call;
}

// Where a session answers when its client is not on the socket (the HTTP API, api/): the same
// Handler serves the request, and the sink gets what would have been written as lines. Called
// on the loop thread only, never after the final reply.
class SessionSink {
 public:
  virtual ~SessionSink() = default;
  virtual bool open() const = 0;  // false once the client went away
  virtual EventOutcome event(std::string_view name, const std::function<Json()>& make_data) = 0;
  virtual void reply(const Json& result) = 0;
  virtual void fail(const RemoteError& error) = 0;
};

// One request's channel back to its client. Cheap to copy; keep a copy to answer later or to
// stream (logs -f). Once the client disconnects (or after the final reply) alive() is false and
// every method is a harmless no-op, so a stream notices by checking alive() or event()'s result.
class Session {
 public:
  Session() = default;  // an empty handle: never alive

  bool alive() const;
  RequestId id() const;
  // Unique for the server's lifetime (a key for followers; ids repeat across clients).
  std::uint64_t serial() const;
  const PeerCredentials& peer() const;

  EventOutcome event(std::string_view name, const Json& data);
  // As event(), but builds the data only when it will be sent: a stream to a client that does
  // not keep up skips without paying for the event (logs -f under a flood of lines).
  EventOutcome event_lazily(std::string_view name, const std::function<Json()>& make_data);
  // As event_lazily, for a hot path with its own writer: `write_data` appends the JSON text of
  // what make_data() returns (the same text), and a client gets that; a sink still gets a Json.
  EventOutcome event_lazily(std::string_view name, const std::function<Json()>& make_data,
                            const std::function<void(std::string&)>& write_data);
  // Whether an event offered now would go out: false while the client has a full write queue
  // (events are being skipped) or is gone. A session answered into a sink says true: its sink
  // decides event by event. Within one turn of the loop a false stays false (the queue only
  // drains between turns), so a stream may ask once and skip a whole batch of work.
  bool takes_events() const;
  // Counts `count` events as skipped, as event() does for each event it skips because the client
  // does not keep up (the client is told how many with the next event that goes out); a no-op
  // unless the client is connected with a full write queue. For a stream that asked
  // takes_events() and did not build the events at all (logs -f, issue 25).
  void skip_events(std::uint64_t count);
  // The final reply; the first of reply/fail wins, later calls are ignored.
  void reply(const Json& result);
  void fail(std::string_view code, std::string_view message, const Json& data = Json());
  void fail(const RemoteError& error) { fail(error.code, error.message, error.data); }

  friend bool operator==(const Session& a, const Session& b) { return a.call_ == b.call_; }

  // Made by the server (detail::Call is private to server.cc).
  explicit Session(std::shared_ptr<detail::Call> call) : call_(std::move(call)) {}
  // A session answered into `sink`; its serial is unique among all sessions of the process.
  static Session with_sink(std::shared_ptr<SessionSink> sink, RequestId id = 0);

 private:
  std::shared_ptr<detail::Call> call_;
};

class Handler {
 public:
  virtual ~Handler() = default;
  // Answer now (session.reply) or keep the session and answer later; stream with events. Called
  // on the loop thread; may call Server::close().
  virtual void on_request(Session session, const Request& request) = 0;
  // The client went away (or the server is closing) while `session` was unanswered: drop every
  // reference to it. Called once per such session; the session is already dead.
  virtual void on_close(const Session& session) { (void)session; }
};

class Server {
 public:
  Server(uv_loop_s* loop, Handler& handler, ServerOptions options = {});
  // Closes what is still open. Handle memory is freed in libuv close callbacks, so the loop must
  // run once more afterwards (uv_run) for uv_loop_close to succeed.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Creates the directory (0700) when missing and refuses one that is not ours or is open to
  // others; refuses a path longer than sun_path allows; takes "<path>.lock" (flock) so two
  // daemons cannot race; replaces a stale socket (nothing accepting) and refuses a live one
  // ("another daemon is running"); binds, makes the socket 0600, listens.
  Status listen(const std::string& socket_path);
  // Serves an already-listening Unix socket (systemd socket activation). The server owns fd.
  Status listen_fd(int fd);

  // Stops accepting, stops reading, tells the handler about unanswered sessions, lets queued
  // writes drain for up to close_drain_ms, then closes everything and removes the socket file
  // it created. Safe to call from a handler and more than once. on_closed runs (on the loop)
  // once every connection is closed; the handles' memory is freed on the loop turns after.
  void close(std::function<void()> on_closed = {});
  bool closing() const;

  // Open connections, those still draining included.
  std::size_t connection_count() const;
  // The path listen() bound (empty after listen_fd).
  const std::string& socket_path() const;

  struct Impl;  // server.cc

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace stackie::ipc
