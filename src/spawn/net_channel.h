// The daemon's half of the net channel to a lockbox monitor (net_channel_protocol.h, DESIGN.md
// §6), on the loop. Sockets asked for arrive in request order; at most kInFlight requests are
// on the wire at once (a SOCK_SEQPACKET buffer holds only a few hundred messages), the rest
// wait here, so a burst of a thousand connections is served, not refused.
#pragma once

#include <uv.h>

#include <functional>
#include <vector>

#include "base/uv_handle.h"
#include "spawn/spawner.h"

namespace stackie::spawn_detail {

class NetChannel {
 public:
  using Listeners = std::function<void(std::vector<int> fds)>;
  // Takes `fd` (our end of the pair). The channel frees itself after close().
  static Result<NetChannel*> open(uv_loop_t* loop, int fd, Listeners on_listeners);
  void request_socket(SocketDone done);
  // Every pending request fails with UV_ECANCELED; no callback after this returns.
  void close();

 private:
  static constexpr size_t kInFlight = 32;
  NetChannel() = default;
  void on_readable();
  void receive_one(bool* more);
  void send_waiting();
  void fail_all(int status);
  void deliver(Result<int> socket);
  // Forgets the answered requests at the front (or all of them, with their memory, once none
  // is left).
  void drop_answered();

  UvHandle<uv_poll_t> poll_;
  int fd_ = -1;
  Listeners on_listeners_;
  // The requests in order: [head_, head_ + sent_) are on the wire, the rest wait. A vector,
  // not a std::deque, which allocates 576 bytes when made: a channel per block, most of them
  // never asked for a socket (bench/scale, 500 blocks).
  std::vector<SocketDone> requests_;
  size_t head_ = 0;
  size_t sent_ = 0;
  bool broken_ = false;
  bool closed_ = false;
};

}  // namespace stackie::spawn_detail
