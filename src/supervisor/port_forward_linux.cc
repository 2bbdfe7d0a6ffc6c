#include "supervisor/port_forward.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace stackie {

// One forwarded connection. Two phases:
//   1. connect: the accepted client and the upstream are libuv TCP handles until the upstream
//      connect completes (nothing is read from the client before);
//   2. relay: each socket is dup'ed out of its handle (the handles close) and the bytes move
//      with splice(2) through one pipe per direction, so they never enter the daemon's memory:
//      the pipe is the whole buffer of a direction, which bounds it and gives backpressure
//      (a side is polled for reading only while its pipe has room).
// It frees itself once every handle is closed and no socket request or connect is pending.
class Relay {
 public:
  Relay(PortForward* owner, UvHandle<uv_tcp_t> client)
      : owner_(owner), loop_(owner->loop_), client_(std::move(client)) {
    client_.get()->data = this;
    owner_->relays_.insert(this);
  }

  void start(const Upstream& upstream) {
    port_ = upstream.port;
    if (!upstream.source) return open_upstream(-1);
    waiting_for_socket_ = true;
    upstream.source([this](Result<int> socket) {
      waiting_for_socket_ = false;
      if (finished_) {
        if (socket.ok()) ::close(*socket);
        return maybe_delete();
      }
      if (!socket.ok()) return reset();
      open_upstream(*socket);
    });
  }

  // The forward goes away: reset both sides.
  void detach() {
    if (owner_ != nullptr) owner_->relays_.erase(this);
    owner_ = nullptr;
    reset();
  }

 private:
  // A direction: bytes read from sides_[from] go through the pipe to the other side.
  struct Direction {
    int pipe_read = -1;
    int pipe_write = -1;
    size_t capacity = 0;  // of the pipe
    size_t buffered = 0;  // bytes in the pipe
    bool eof = false;     // read EOF from its source
    bool shut = false;    // the destination's write half is shut
  };
  struct Side {
    Relay* relay = nullptr;
    int fd = -1;
    UvHandle<uv_poll_t> poll;  // phase 2; `fd` is closed once it is closed
    int events = 0;            // what `poll` waits for now
  };

  // The pipe is a direction's whole buffer. It starts at the kernel's default (64 KiB) and
  // grows to kBulkPipeBytes the first time it fills: bulk transfers move in fewer, larger
  // splices (bench/forward: about 1.3x the throughput of 256 KiB) while the many small
  // connections do not reserve megabytes each against the user's pipe limits
  // (/proc/sys/fs/pipe-user-pages-soft). A refused F_SETPIPE_SZ keeps the smaller pipe.
  static constexpr int kBulkPipeBytes = 1024 * 1024;

  void open_upstream(int fd) {
    upstream_.init([this](uv_tcp_t* tcp) { return uv_tcp_init(loop_, tcp); }, this);
    if (fd >= 0) {
      if (int rc = uv_tcp_open(upstream_.get(), fd); rc != 0) {
        ::close(fd);
        return reset();
      }
    }
    sockaddr_in address{};
    uv_ip4_addr("127.0.0.1", port_, &address);
    connect_.data = this;
    int rc = uv_tcp_connect(&connect_, upstream_.get(), reinterpret_cast<const sockaddr*>(&address),
                            [](uv_connect_t* request, int status) {
                              auto* self = static_cast<Relay*>(request->data);
                              self->connecting_ = false;
                              if (self->finished_) return self->maybe_delete();
                              if (status != 0) return self->reset();
                              self->connected();
                            });
    if (rc != 0) return reset();
    connecting_ = true;
  }

  // Both sockets out of their libuv handles: the dups keep the connections open.
  void connected() {
    uv_tcp_t* handles[2] = {client_.get(), upstream_.get()};
    for (int i = 0; i < 2; ++i) {
      uv_tcp_nodelay(handles[i], 1);  // small requests (redis, postgres) go out at once
      uv_os_fd_t fd;
      if (uv_fileno(reinterpret_cast<uv_handle_t*>(handles[i]), &fd) != 0) return reset();
      sides_[i].fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      sides_[i].relay = this;
      if (sides_[i].fd < 0) return reset();
    }
    close_tcp_handles(false);
    for (Direction& direction : directions_) {
      int fds[2];
      if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return reset();
      direction.pipe_read = fds[0];
      direction.pipe_write = fds[1];
      int size = ::fcntl(direction.pipe_write, F_GETPIPE_SZ);
      direction.capacity = size > 0 ? static_cast<size_t>(size) : 4096;
    }
    for (Side& side : sides_) {
      if (side.poll.init([&](uv_poll_t* poll) { return uv_poll_init(loop_, poll, side.fd); },
                         &side) != 0)
        return reset();
    }
    pump();
  }

  // Moves what can be moved without blocking, then waits for the events that would let more
  // move. An event on one side concerns the direction read from it (readable) and the one
  // written to it (writable); with no event given, both.
  void pump(int side = -1, int events = UV_READABLE | UV_WRITABLE) {
    for (int from = 0; from < 2 && !finished_; ++from) {
      bool readable = side == from && (events & UV_READABLE);
      bool writable = side == 1 - from && (events & UV_WRITABLE);
      if (side < 0 || readable || writable) move(from);
    }
    if (finished_) return;
    if (directions_[0].shut && directions_[1].shut) return finish(false);
    for (int i = 0; i < 2; ++i) {
      const Direction& out = directions_[i];     // bytes read from side i
      const Direction& in = directions_[1 - i];  // bytes written to side i
      int wanted = 0;
      if (!out.eof && out.buffered < out.capacity) wanted |= UV_READABLE;
      if (in.buffered > 0) wanted |= UV_WRITABLE;
      watch(sides_[i], wanted);
    }
  }

  void move(int from) {
    Direction& direction = directions_[from];
    int source = sides_[from].fd;
    int destination = sides_[1 - from].fd;
    for (;;) {
      bool progress = false;
      if (direction.buffered == direction.capacity) grow(direction);
      size_t room = direction.capacity - direction.buffered;
      if (!direction.eof && room > 0) {
        ssize_t n = ::splice(source, nullptr, direction.pipe_write, nullptr, room,
                             SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (n > 0) {
          direction.buffered += static_cast<size_t>(n);
          progress = true;
        } else if (n == 0) {
          direction.eof = true;
        } else if (errno != EAGAIN && errno != EINTR) {
          return reset();  // ECONNRESET and friends: pass the reset on
        }
      }
      if (direction.buffered > 0) {
        ssize_t n = ::splice(direction.pipe_read, nullptr, destination, nullptr, direction.buffered,
                             SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
        if (n > 0) {
          direction.buffered -= static_cast<size_t>(n);
          progress = true;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          return reset();
        }
      }
      if (!progress) break;
    }
    // A half-close: once everything read before the EOF is delivered, shut the write half.
    if (direction.eof && direction.buffered == 0 && !direction.shut) {
      ::shutdown(destination, SHUT_WR);
      direction.shut = true;
    }
  }

  static void grow(Direction& direction) {
    if (direction.capacity >= static_cast<size_t>(kBulkPipeBytes)) return;
    int size = ::fcntl(direction.pipe_write, F_SETPIPE_SZ, kBulkPipeBytes);
    if (size > 0) direction.capacity = static_cast<size_t>(size);
  }

  void watch(Side& side, int events) {
    if (!side.poll || side.events == events) return;
    side.events = events;
    if (events == 0) {
      uv_poll_stop(side.poll.get());
      return;
    }
    uv_poll_start(side.poll.get(), events, [](uv_poll_t* handle, int status, int ready) {
      auto* which = static_cast<Side*>(handle->data);
      Relay* self = which->relay;
      // An error shows up again in splice, which resets: try everything then.
      if (status < 0) return self->pump();
      self->pump(which == &self->sides_[0] ? 0 : 1, ready);
    });
  }

  void reset() { finish(true); }

  // Closes everything: with an RST (SO_LINGER 0) when the connection broke, so the other end
  // learns it was not a clean end.
  void finish(bool with_reset) {
    if (finished_) return;
    finished_ = true;
    if (owner_ != nullptr) owner_->relays_.erase(this);
    owner_ = nullptr;
    close_tcp_handles(with_reset);
    for (Side& side : sides_) {
      if (side.fd >= 0 && with_reset) {
        linger hard{1, 0};
        ::setsockopt(side.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
      }
      if (!side.poll) {
        if (side.fd >= 0) ::close(side.fd);
        side.fd = -1;
        continue;
      }
      ++open_handles_;
      side.poll.close([this, &side] {
        ::close(side.fd);  // only now: never close an fd that is being polled
        side.fd = -1;
        --open_handles_;
        maybe_delete();
      });
    }
    for (Direction& direction : directions_) {
      if (direction.pipe_read >= 0) ::close(direction.pipe_read);
      if (direction.pipe_write >= 0) ::close(direction.pipe_write);
      direction.pipe_read = direction.pipe_write = -1;
    }
    maybe_delete();
  }

  void close_tcp_handles(bool with_reset) {
    for (UvHandle<uv_tcp_t>* tcp : {&client_, &upstream_}) {
      if (!*tcp) continue;
      ++open_handles_;
      auto closed = [this] {
        --open_handles_;
        maybe_delete();
      };
      if (with_reset)
        tcp->close_reset(closed);
      else
        tcp->close(closed);
    }
  }

  void maybe_delete() {
    if (finished_ && open_handles_ == 0 && !connecting_ && !waiting_for_socket_) delete this;
  }

  PortForward* owner_;
  uv_loop_t* loop_;
  UvHandle<uv_tcp_t> client_;    // phase 1 only
  UvHandle<uv_tcp_t> upstream_;  // phase 1 only
  uv_connect_t connect_{};
  Side sides_[2];            // [0] the accepted client, [1] the upstream (phase 2)
  Direction directions_[2];  // [0] client -> upstream, [1] upstream -> client
  int port_ = 0;
  int open_handles_ = 0;
  bool connecting_ = false;
  bool waiting_for_socket_ = false;
  bool finished_ = false;
};

PortForward::PortForward(uv_loop_t* loop, UpstreamFor upstream)
    : loop_(loop), upstream_(std::move(upstream)) {
  listener_.init([this](uv_tcp_t* tcp) { return uv_tcp_init(loop_, tcp); }, this);
}

PortForward::~PortForward() {
  listener_.close();
  for (Relay* relay : std::set<Relay*>(relays_)) relay->detach();
}

Result<std::unique_ptr<PortForward>> PortForward::listen_host(uv_loop_t* loop, int port,
                                                              UpstreamFor upstream) {
  std::unique_ptr<PortForward> forward(new PortForward(loop, std::move(upstream)));
  sockaddr_in address{};
  uv_ip4_addr("127.0.0.1", port, &address);
  if (int rc =
          uv_tcp_bind(forward->listener_.get(), reinterpret_cast<const sockaddr*>(&address), 0);
      rc != 0)
    return Error{rc, "127.0.0.1:" + std::to_string(port) + ": " + uv_strerror(rc)};
  STACKIE_TRY(forward->listen());
  return forward;
}

Result<std::unique_ptr<PortForward>> PortForward::adopt(uv_loop_t* loop, int fd,
                                                        UpstreamFor upstream) {
  std::unique_ptr<PortForward> forward(new PortForward(loop, std::move(upstream)));
  if (int rc = uv_tcp_open(forward->listener_.get(), fd); rc != 0) {
    ::close(fd);
    return Error{rc, std::string("adopt listener: ") + uv_strerror(rc)};
  }
  STACKIE_TRY(forward->listen());
  return forward;
}

Status PortForward::listen() {
  int rc = uv_listen(listener_.stream(), SOMAXCONN, [](uv_stream_t* server, int status) {
    auto* self = static_cast<PortForward*>(server->data);
    if (self != nullptr && status == 0) self->accept_one();
  });
  // uv_tcp_bind defers EADDRINUSE to listen.
  if (rc != 0) return Error{rc, "127.0.0.1:" + std::to_string(port_) + ": " + uv_strerror(rc)};
  sockaddr_storage bound{};
  int length = sizeof bound;
  if (uv_tcp_getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&bound), &length) == 0)
    port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return {};
}

void PortForward::accept_one() {
  UvHandle<uv_tcp_t> client;
  if (client.init([this](uv_tcp_t* tcp) { return uv_tcp_init(loop_, tcp); }, nullptr) != 0 ||
      uv_accept(listener_.stream(), client.stream()) != 0)
    return;  // the handle closes with `client`
  auto* relay = new Relay(this, std::move(client));
  auto upstream = relays_.size() > kMaxConnections
                      ? Result<Upstream>(Error{UV_EMFILE, "too many connections"})
                      : upstream_();
  if (!upstream.ok()) return relay->detach();
  relay->start(*upstream);
}

}  // namespace stackie
