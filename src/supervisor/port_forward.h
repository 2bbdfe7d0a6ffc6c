// The daemon's TCP forwarder (DESIGN.md §6): a listener whose every accepted connection is
// relayed to an upstream port, with all the copying on the daemon's loop. Host listeners serve
// a block's `serves` ports on 127.0.0.1; listeners made inside a consumer's network namespace
// (by its lockbox) serve its `consumes`. A relay
//   - connects upstream before it reads a byte from the client (the kernel holds early data),
//   - moves the bytes with splice(2) through one pipe per direction: they never enter the
//     daemon's memory, and a full pipe stops the reading, so a slow reader holds the sender
//     back instead of growing anything,
//   - passes a half-close on (EOF read -> shutdown of the other side's write half),
//   - turns a refused or reset upstream into a reset of the client (and the other way round).
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <set>

#include "base/error.h"
#include "base/uv_handle.h"
#include "spawn/spawner.h"

namespace stackie {

// Where one forwarded connection goes: 127.0.0.1:port, from a socket made by `source` (inside
// a block's network namespace) or, with no source, from the daemon's own network.
struct Upstream {
  std::function<void(SocketDone)> source;
  int port = 0;
};

// Asked once per accepted connection; an error resets that connection.
using UpstreamFor = std::function<Result<Upstream>()>;

class Relay;

class PortForward {
 public:
  // Listens on 127.0.0.1:port of the daemon's network (port 0: the kernel picks one).
  static Result<std::unique_ptr<PortForward>> listen_host(uv_loop_t* loop, int port,
                                                          UpstreamFor upstream);
  // Serves an already listening socket, e.g. one the lockbox made inside a namespace; takes fd.
  static Result<std::unique_ptr<PortForward>> adopt(uv_loop_t* loop, int fd, UpstreamFor upstream);
  ~PortForward();  // stops listening; live connections are reset
  PortForward(const PortForward&) = delete;
  PortForward& operator=(const PortForward&) = delete;

  int port() const { return port_; }
  size_t connections() const { return relays_.size(); }

  static constexpr size_t kMaxConnections = 4096;

 private:
  friend class Relay;
  PortForward(uv_loop_t* loop, UpstreamFor upstream);
  Status listen();
  void accept_one();

  uv_loop_t* loop_;
  UpstreamFor upstream_;
  UvHandle<uv_tcp_t> listener_;
  int port_ = 0;
  std::set<Relay*> relays_;
};

}  // namespace stackie
