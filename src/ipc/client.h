// The CLI's end of the IPC protocol: blocking calls, no libuv, bounded by timeouts. Over a Unix
// socket (client_unix.cc) or, on Windows, a named pipe (client_windows.cc); fd() is a C runtime
// fd there too.
//
//   STACKIE_TRY_ASSIGN(client, ipc::Client::connect(path));     // is_daemon_not_running(err)
//   STACKIE_TRY_ASSIGN(reply, client.call("up", params, [](const ipc::Event& e) { ... }));
//   if (!reply.ok()) ... reply.error().code ...
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/json.h"
#include "ipc/framing.h"
#include "ipc/protocol.h"

namespace stackie::ipc {

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{2000};
  // Longest silence while waiting for the next message of a call (each event restarts it);
  // 0 waits forever (logs -f).
  std::chrono::milliseconds idle_timeout{30000};
  // Server lines can be longer than requests (ps of many blocks, status with a policy).
  std::size_t max_line = std::size_t{16} << 20;
  // Refuse a socket served by another uid (root excepted): a stale path in a shared directory
  // must not let someone else impersonate the daemon.
  bool check_server_uid = true;
  // Windows, with check_server_uid: the server's program must have this file name (compared
  // ignoring case); empty = any. The server is found by a pid (GetNamedPipeServerProcessId),
  // and a pid can be reused: a block that made a pipe of the daemon's name and is gone could
  // have its pid pass to another process of the user's. That process is not stackied.exe.
  std::string server_program = "stackied.exe";
};

// connect()'s error when nothing serves the path (no socket file: UV_ENOENT; a socket file
// nobody accepts on: UV_ECONNREFUSED): the CLI's "daemon not running", exit code 3. Any other
// error (permissions, a path too long, a foreign server) is something else to report.
bool is_daemon_not_running(const Error& connect_error);
// connect()'s error when the daemon that made the socket is dying (killed, exiting: UV_ESRCH):
// the socket may accept connections until the process is gone, and nothing answers them.
// Unix only; wait until it no longer serves, then it is "not running".
bool is_daemon_exiting(const Error& connect_error);

class Client {
 public:
  using EventHandler = std::function<void(const Event& event)>;

  static Result<Client> connect(const std::string& socket_path, ClientOptions options = {});

  Client(Client&& other) noexcept;
  Client& operator=(Client&& other) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  // Sends one request and waits for its final reply, passing its events to on_event. A remote
  // error is a Reply with !ok(); an Error means transport trouble: UV_ETIMEDOUT (idle timeout),
  // UV_EOF (the daemon closed the connection), UV_EPROTO (a malformed or unrelated message),
  // UV_E2BIG (a line over max_line), or an errno from the socket.
  Result<Reply> call(std::string_view method, Json params = Json::object(),
                     const EventHandler& on_event = {});
  // The same, also running `tick.run` after every `tick.every` without a message (a live
  // display redraws its clocks). The idle timeout still counts from the last message.
  struct Tick {
    std::chrono::milliseconds every{0};
    std::function<void()> run;
  };
  Result<Reply> call(std::string_view method, Json params, const EventHandler& on_event,
                     const Tick& tick);

  // Lines of this call's events that the caller decodes itself, before any parse: take(id,
  // line) returns true when it took the line, which is then neither parsed nor given to
  // on_event. For a hot path that knows one event's exact text (`logs -f` under a flood,
  // cli/log_text_event.h: a JSON tree per event was most of the follower's CPU).
  using LineTaker = std::function<bool(RequestId id, std::string_view line)>;
  Result<Reply> call(std::string_view method, Json params, const EventHandler& on_event,
                     const LineTaker& take_line);

  // The pieces of call(), for callers that interleave: send returns the request's id.
  Result<RequestId> send(std::string_view method, Json params = Json::object());
  // The next message from the server, waiting at most `timeout` (0 = forever).
  Result<ServerMessage> read_message(std::chrono::milliseconds timeout);
  // Whether whole messages are already read from the socket and waiting here: a caller that
  // polls fd() must take them first (poll() no longer sees them).
  bool buffered() const { return !pending_lines_.empty(); }
  // Raw bytes, unframed (tests feed garbage with it).
  Status send_raw(std::string_view bytes);

  void close();
  int fd() const { return fd_; }
  const ClientOptions& options() const { return options_; }

 private:
  Client(int fd, ClientOptions options);
  Result<Reply> call(std::string_view method, Json params, const EventHandler& on_event,
                     const Tick& tick, const LineTaker& take_line);
  // The next line from the server, unparsed, waiting at most `timeout` (0 = forever).
  Result<std::string> read_line(std::chrono::milliseconds timeout);
  Status write_all(std::string_view bytes);
  // Up to `size` bytes: 0 at the end of the stream, nullopt when the deadline passed first.
  Result<std::optional<std::size_t>> read_some(
      char* buffer, std::size_t size,
      std::optional<std::chrono::steady_clock::time_point> deadline);

  int fd_ = -1;
  ClientOptions options_;
  LineSplitter splitter_;
  std::deque<std::string> pending_lines_;  // complete lines read, not yet returned
  RequestId next_id_ = 1;
  bool eof_ = false;
};

}  // namespace stackie::ipc
