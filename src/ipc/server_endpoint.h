// What the IPC server asks of the platform, one file per platform: server_endpoint_unix.cc (a
// Unix socket file: private directory, lock, stale socket, SO_PEERCRED/getpeereid) and
// server_endpoint_windows.cc (a named pipe whose DACL admits the user only; the client's user
// SID read from its process token). server.cc, the protocol, is the same everywhere.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/error.h"
#include "ipc/peer_cred.h"
#include "ipc/server.h"

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_pipe_s uv_pipe_t;
typedef struct uv_stream_s uv_stream_t;
typedef void (*uv_connection_cb)(uv_stream_t* server, int status);

namespace stackie::ipc {

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // Undoes what listen made (the socket file; the lock). Called once, when the server closes.
  virtual void release() = 0;
  // Calls `gone` (once, from the loop) when the address vanishes under the running server, so
  // that the server binds it again: a socket file can be deleted; a named pipe cannot, so the
  // Windows endpoint never calls it. `gone` may destroy this endpoint.
  virtual void watch(uv_loop_t* loop, std::function<void()> gone, const LogHook& log) = 0;
};

// Binds `listener` (uv_pipe_init'ed) at `path` and listens with `on_connection`.
Result<std::unique_ptr<Endpoint>> listen_endpoint(uv_pipe_t* listener, const std::string& path,
                                                  uv_connection_cb on_connection,
                                                  const LogHook& log);
// Serves an already-listening socket passed by a service manager (POSIX only).
Status adopt_listening_fd(uv_pipe_t* listener, int fd, uv_connection_cb on_connection);
// Who is at the other end of an accepted connection, as the OS says.
Result<PeerCredentials> accepted_peer(uv_pipe_t* connection);
// The refusal to send `peer` (and log), or empty when this daemon serves it.
std::string refusal_for(const PeerCredentials& peer, const ServerOptions& options);
// Asked again once the client's first bytes were read, where the OS can say more than at the
// connection: on Windows the client's own token (ImpersonateNamedPipeClient needs a message
// read first). accepted_peer read a pid there, and a pid can be reused once its process is
// gone; a token cannot. POSIX: nothing more (SO_PEERCRED is the socket's own, taken at
// connect). Empty when the client passes.
std::string first_read_refusal(uv_pipe_t* connection);
// "uid 1000, pid 42" / "S-1-5-21-..., pid 42": the peer, for the log.
std::string describe(const PeerCredentials& peer);
// The client closed its end (not only its writing half).
bool peer_hung_up(uv_pipe_t* connection);

}  // namespace stackie::ipc
