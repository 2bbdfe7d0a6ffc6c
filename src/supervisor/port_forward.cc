#include "supervisor/port_forward.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace stackie {

// One forwarded connection: two TCP handles and two directions. It frees itself once both
// handles are closed and no socket request is outstanding.
class Relay {
 public:
  Relay(PortForward* owner, uv_tcp_t* client) : owner_(owner), loop_(owner->loop_) {
    sides_[0].tcp = client;
    client->data = &sides_[0];
    sides_[0].relay = this;
    sides_[1].relay = this;
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
  struct Side {
    Relay* relay = nullptr;
    uv_tcp_t* tcp = nullptr;
    bool eof = false;        // read EOF from this side
    bool shut = false;       // shutdown of this side's write half done
    bool reading = false;
    bool paused = false;     // not reading because the other side's queue is full
  };
  struct Chunk {
    uv_write_t request;
    Relay* relay;
    int to;  // index of the side written to
    char* data;
  };
  // One read per chunk, freed when its write completes: 256 KiB keeps the syscalls per byte
  // low (bench/forward) while idle connections hold no buffer at all.
  static constexpr size_t kChunk = 256 * 1024;

  Side& other(Side& side) { return &side == &sides_[0] ? sides_[1] : sides_[0]; }
  int index(const Side& side) const { return &side == &sides_[0] ? 0 : 1; }

  void open_upstream(int fd) {
    auto* tcp = new uv_tcp_t;
    uv_tcp_init(loop_, tcp);
    sides_[1].tcp = tcp;
    tcp->data = &sides_[1];
    if (fd >= 0) {
      if (int rc = uv_tcp_open(tcp, fd); rc != 0) {
        ::close(fd);
        return reset();
      }
    }
    sockaddr_in address{};
    uv_ip4_addr("127.0.0.1", port_, &address);
    connect_.data = this;
    int rc = uv_tcp_connect(&connect_, tcp, reinterpret_cast<const sockaddr*>(&address),
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

  void connected() {
    for (Side& side : sides_) {
      uv_tcp_nodelay(side.tcp, 1);  // small requests (redis, postgres) go out at once
      start_reading(side);
    }
  }

  void start_reading(Side& side) {
    side.reading = true;
    side.paused = false;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(side.tcp),
        [](uv_handle_t*, size_t, uv_buf_t* buf) {
          *buf = uv_buf_init(static_cast<char*>(std::malloc(kChunk)), kChunk);
        },
        [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
          auto* from = static_cast<Side*>(stream->data);
          from->relay->on_read(*from, n, buf);
        });
  }

  void on_read(Side& from, ssize_t n, const uv_buf_t* buf) {
    if (n <= 0) std::free(buf->base);
    if (n == 0) return;
    if (n == UV_EOF) return on_eof(from);
    if (n < 0) return reset();  // ECONNRESET and friends: pass the reset on
    Side& to = other(from);
    auto* chunk = new Chunk{{}, this, index(to), buf->base};
    chunk->request.data = chunk;
    uv_buf_t out = uv_buf_init(buf->base, static_cast<unsigned>(n));
    ++writes_;
    int rc = uv_write(&chunk->request, reinterpret_cast<uv_stream_t*>(to.tcp), &out, 1,
                      [](uv_write_t* request, int status) {
                        auto* done = static_cast<Chunk*>(request->data);
                        done->relay->on_written(done->to, status);
                        std::free(done->data);
                        delete done;
                      });
    if (rc != 0) {
      --writes_;
      std::free(chunk->data);
      delete chunk;
      return reset();
    }
    if (to.tcp->write_queue_size > PortForward::kHighWater) {
      uv_read_stop(reinterpret_cast<uv_stream_t*>(from.tcp));
      from.paused = true;
    }
  }

  void on_written(int to_index, int status) {
    --writes_;
    if (finished_) return maybe_delete();
    if (status != 0) return reset();
    Side& to = sides_[to_index];
    Side& from = other(to);
    if (from.paused && !from.eof && to.tcp->write_queue_size <= PortForward::kHighWater / 2)
      start_reading(from);
  }

  // A half-close: everything read from `from` is queued to the other side; shut its write
  // half once that is written (uv_shutdown waits for the queued writes).
  void on_eof(Side& from) {
    from.eof = true;
    uv_read_stop(reinterpret_cast<uv_stream_t*>(from.tcp));
    Side& to = other(from);
    auto* request = new uv_shutdown_t;
    request->data = &to;
    ++shutdowns_;
    int rc = uv_shutdown(request, reinterpret_cast<uv_stream_t*>(to.tcp),
                         [](uv_shutdown_t* req, int status) {
                           auto* side = static_cast<Side*>(req->data);
                           delete req;
                           Relay* self = side->relay;
                           --self->shutdowns_;
                           if (self->finished_) return self->maybe_delete();
                           if (status != 0) return self->reset();
                           side->shut = true;
                           if (self->sides_[0].shut && self->sides_[1].shut) self->finish(false);
                         });
    if (rc != 0) {
      --shutdowns_;
      delete request;
      reset();
    }
  }

  void reset() { finish(true); }

  // Closes both handles: with an RST (uv_tcp_close_reset) when the connection broke, so the
  // client learns it was not a clean end.
  void finish(bool with_reset) {
    if (finished_) return;
    finished_ = true;
    if (owner_ != nullptr) owner_->relays_.erase(this);
    owner_ = nullptr;
    for (Side& side : sides_) {
      if (side.tcp == nullptr) continue;
      ++open_handles_;
      auto on_close = [](uv_handle_t* handle) {
        auto* closed = static_cast<Side*>(handle->data);
        delete reinterpret_cast<uv_tcp_t*>(handle);
        Relay* self = closed->relay;
        closed->tcp = nullptr;
        --self->open_handles_;
        self->maybe_delete();
      };
      // A reset needs an open socket; one still connecting has none worth resetting.
      if (!with_reset || uv_tcp_close_reset(side.tcp, on_close) != 0)
        uv_close(reinterpret_cast<uv_handle_t*>(side.tcp), on_close);
    }
    maybe_delete();
  }

  void maybe_delete() {
    if (finished_ && open_handles_ == 0 && writes_ == 0 && shutdowns_ == 0 && !connecting_ &&
        !waiting_for_socket_)
      delete this;
  }

  PortForward* owner_;
  uv_loop_t* loop_;
  Side sides_[2];  // [0] the accepted client, [1] the upstream
  uv_connect_t connect_{};
  int port_ = 0;
  int open_handles_ = 0;
  int writes_ = 0;
  int shutdowns_ = 0;
  bool connecting_ = false;
  bool waiting_for_socket_ = false;
  bool finished_ = false;
};

PortForward::PortForward(uv_loop_t* loop, UpstreamFor upstream)
    : loop_(loop), upstream_(std::move(upstream)) {
  listener_ = new uv_tcp_t;
  uv_tcp_init(loop_, listener_);
  listener_->data = this;
}

PortForward::~PortForward() {
  listener_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(listener_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_tcp_t*>(handle); });
  for (Relay* relay : std::set<Relay*>(relays_)) relay->detach();
}

Result<std::unique_ptr<PortForward>> PortForward::listen_host(uv_loop_t* loop, int port,
                                                              UpstreamFor upstream) {
  std::unique_ptr<PortForward> forward(new PortForward(loop, std::move(upstream)));
  sockaddr_in address{};
  uv_ip4_addr("127.0.0.1", port, &address);
  if (int rc = uv_tcp_bind(forward->listener_, reinterpret_cast<const sockaddr*>(&address), 0);
      rc != 0)
    return Error{rc, "127.0.0.1:" + std::to_string(port) + ": " + uv_strerror(rc)};
  STACKIE_TRY(forward->listen());
  return forward;
}

Result<std::unique_ptr<PortForward>> PortForward::adopt(uv_loop_t* loop, int fd,
                                                        UpstreamFor upstream) {
  std::unique_ptr<PortForward> forward(new PortForward(loop, std::move(upstream)));
  if (int rc = uv_tcp_open(forward->listener_, fd); rc != 0) {
    ::close(fd);
    return Error{rc, std::string("adopt listener: ") + uv_strerror(rc)};
  }
  STACKIE_TRY(forward->listen());
  return forward;
}

Status PortForward::listen() {
  int rc = uv_listen(reinterpret_cast<uv_stream_t*>(listener_), SOMAXCONN,
                     [](uv_stream_t* server, int status) {
                       auto* self = static_cast<PortForward*>(server->data);
                       if (self != nullptr && status == 0) self->accept_one();
                     });
  // uv_tcp_bind defers EADDRINUSE to listen.
  if (rc != 0) return Error{rc, "127.0.0.1:" + std::to_string(port_) + ": " + uv_strerror(rc)};
  sockaddr_storage bound{};
  int length = sizeof bound;
  if (uv_tcp_getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &length) == 0)
    port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return {};
}

void PortForward::accept_one() {
  auto* client = new uv_tcp_t;
  uv_tcp_init(loop_, client);
  if (uv_accept(reinterpret_cast<uv_stream_t*>(listener_),
                reinterpret_cast<uv_stream_t*>(client)) != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(client),
             [](uv_handle_t* handle) { delete reinterpret_cast<uv_tcp_t*>(handle); });
    return;
  }
  auto* relay = new Relay(this, client);
  auto upstream = relays_.size() > kMaxConnections
                      ? Result<Upstream>(Error{UV_EMFILE, "too many connections"})
                      : upstream_();
  if (!upstream.ok()) return relay->detach();
  relay->start(*upstream);
}

}  // namespace stackie
