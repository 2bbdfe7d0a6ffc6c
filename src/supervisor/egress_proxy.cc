#include "supervisor/egress_proxy.h"

#include <fnmatch.h>
#include <unistd.h>

#include <cstring>

namespace stackie {

namespace {

constexpr size_t kMaxHead = 8192;  // a request head longer than this is refused

// "host:port" of a request line, and whether the request is CONNECT. Empty on anything else.
struct Destination {
  std::string host;
  std::string port;
  bool connect = false;
};

Destination parse_request_line(const std::string& head) {
  Destination out;
  size_t end = head.find("\r\n");
  std::string line = head.substr(0, end);
  size_t first = line.find(' ');
  size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
  if (second == std::string::npos) return out;
  std::string method = line.substr(0, first);
  std::string target = line.substr(first + 1, second - first - 1);
  std::string authority;
  if (method == "CONNECT") {
    out.connect = true;
    authority = target;
  } else if (target.rfind("http://", 0) == 0) {
    authority = target.substr(
        7, target.find('/', 7) == std::string::npos ? std::string::npos : target.find('/', 7) - 7);
  } else {
    return out;
  }
  size_t colon = authority.rfind(':');
  if (authority.size() > 1 && authority.front() == '[') {  // [v6]:port
    size_t close = authority.find(']');
    if (close == std::string::npos) return out;
    out.host = authority.substr(1, close - 1);
    out.port = close + 1 < authority.size() && authority[close + 1] == ':'
                   ? authority.substr(close + 2)
                   : "";
  } else if (colon != std::string::npos) {
    out.host = authority.substr(0, colon);
    out.port = authority.substr(colon + 1);
  } else {
    out.host = authority;
  }
  if (out.port.empty()) out.port = out.connect ? "" : "80";
  if (out.host.empty() || out.port.empty() ||
      out.port.find_first_not_of("0123456789") != std::string::npos)
    out.host.clear();
  return out;
}

// "GET http://host:port/path HTTP/1.1" -> "GET /path HTTP/1.1": what the origin expects (many
// dev servers do not take the absolute form a client sends to a proxy).
std::string origin_form(const std::string& head) {
  size_t first = head.find(' ');
  size_t scheme = head.find("://", first);
  size_t second = head.find(' ', first + 1);
  if (first == std::string::npos || scheme == std::string::npos || second == std::string::npos ||
      scheme > second)
    return head;
  size_t path = head.find('/', scheme + 3);
  std::string target =
      path == std::string::npos || path > second ? "/" : head.substr(path, second - path);
  return head.substr(0, first + 1) + target + head.substr(second);
}

}  // namespace

// One client connection: its request head, then a tunnel to the destination. Deletes itself
// once both handles are closed.
class EgressTunnel {
 public:
  EgressTunnel(EgressProxy* proxy) : proxy_(proxy), loop_(proxy->loop_) {
    client_.init([this](uv_tcp_t* h) { return uv_tcp_init(loop_, h); }, this);  // cannot fail
    open_handles_ = 1;
  }

  uv_stream_t* client() { return client_.stream(); }

  void start() {
    uv_read_start(client_.stream(), allocate, [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
      static_cast<EgressTunnel*>(s->data)->on_head(n, buf);
    });
  }

  // The proxy goes away: close at once.
  void abort() {
    proxy_ = nullptr;
    close_all();
  }

 private:
  struct Lookup {
    uv_getaddrinfo_t req;
    EgressTunnel* tunnel;
  };
  struct Write {
    uv_write_t req;
    std::string data;
    EgressTunnel* tunnel;
    uv_stream_t* source;  // reading from it resumes once this is written
  };

  static void allocate(uv_handle_t*, size_t, uv_buf_t* buf) {
    static char buffer[65536];  // the loop is single-threaded; data is copied out at once
    *buf = uv_buf_init(buffer, sizeof buffer);
  }

  void on_head(ssize_t n, const uv_buf_t* buf) {
    if (n < 0) return close_all();
    head_.append(buf->base, static_cast<size_t>(n));
    size_t end = head_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (head_.size() > kMaxHead)
        refuse("431 Request Header Fields Too Large", "too long a request");
      return;
    }
    uv_read_stop(client_.stream());
    Destination where = parse_request_line(head_);
    if (where.host.empty())
      return refuse("400 Bad Request", "only CONNECT host:port and http:// requests go out");
    destination_ = where.host + ":" + where.port;
    connect_ = where.connect;
    if (connect_)
      head_.erase(0, end + 4);  // the CONNECT head is for us; the rest goes on
    else
      head_ = origin_form(head_);
    if (proxy_ == nullptr || !EgressProxy::allowed(proxy_->allow_, destination_))
      return refuse("403 Forbidden",
                    "egress to " + destination_ + " is not in this block's egress allowlist");
    auto* lookup = new Lookup{{}, this};
    lookup_ = lookup;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = uv_getaddrinfo(
        loop_, &lookup->req,
        [](uv_getaddrinfo_t* req, int status, addrinfo* result) {
          auto* self = reinterpret_cast<Lookup*>(req);
          if (self->tunnel != nullptr) {
            self->tunnel->lookup_ = nullptr;
            self->tunnel->on_resolved(status, result);
          }
          uv_freeaddrinfo(result);
          delete self;
        },
        where.host.c_str(), where.port.c_str(), &hints);
    if (rc != 0) {
      lookup_ = nullptr;
      delete lookup;
      refuse("502 Bad Gateway", destination_ + ": " + uv_strerror(rc));
    }
  }

  void on_resolved(int status, addrinfo* result) {
    if (closing_) return;
    if (status != 0 || result == nullptr)
      return refuse("502 Bad Gateway", destination_ + ": " + uv_strerror(status));
    upstream_.init([this](uv_tcp_t* h) { return uv_tcp_init(loop_, h); }, this);
    ++open_handles_;
    auto* req = new uv_connect_t;
    req->data = this;
    int rc = uv_tcp_connect(req, upstream_.get(), result->ai_addr, [](uv_connect_t* r, int s) {
      auto* self = static_cast<EgressTunnel*>(r->data);
      delete r;
      self->on_connected(s);
    });
    if (rc != 0) {
      delete req;
      refuse("502 Bad Gateway", destination_ + ": " + uv_strerror(rc));
    }
  }

  void on_connected(int status) {
    if (closing_) return;
    if (status != 0) return refuse("502 Bad Gateway", destination_ + ": " + uv_strerror(status));
    if (proxy_ != nullptr) proxy_->note_("egress: " + destination_);
    if (connect_) send(client_.stream(), "HTTP/1.1 200 Connection established\r\n\r\n", nullptr);
    if (!head_.empty()) send(upstream_.stream(), std::move(head_), nullptr);
    relay(client_.stream());
    relay(upstream_.stream());
  }

  // Bytes read from `from` are written to the other side; reading pauses while a write is
  // pending.
  void relay(uv_stream_t* from) {
    uv_read_start(from, allocate, [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
      auto* self = static_cast<EgressTunnel*>(s->data);
      uv_stream_t* source = s;
      uv_stream_t* target =
          source == self->client_.stream() ? self->upstream_.stream() : self->client_.stream();
      if (n == UV_EOF) return self->half_close(source, target);
      if (n < 0) return self->close_all();
      uv_read_stop(s);
      self->send(target, std::string(buf->base, static_cast<size_t>(n)), source);
    });
  }

  void send(uv_stream_t* to, std::string data, uv_stream_t* resume) {
    auto* write = new Write{{}, std::move(data), this, resume};
    uv_buf_t buf = uv_buf_init(write->data.data(), static_cast<unsigned>(write->data.size()));
    int rc = uv_write(&write->req, to, &buf, 1, [](uv_write_t* req, int status) {
      auto* w = reinterpret_cast<Write*>(req);
      EgressTunnel* self = w->tunnel;
      uv_stream_t* source = w->source;
      delete w;
      if (status != 0) return self->close_all();
      if (source != nullptr && !self->closing_) self->relay(source);
    });
    if (rc != 0) {
      delete write;
      close_all();
    }
  }

  void half_close(uv_stream_t* source, uv_stream_t* target) {
    uv_read_stop(source);
    if (++eofs_ == 2) return close_all();
    auto* req = new uv_shutdown_t;
    req->data = this;
    if (uv_shutdown(req, target, [](uv_shutdown_t* r, int) { delete r; }) != 0) delete req;
  }

  void refuse(const std::string& status, const std::string& why) {
    if (proxy_ != nullptr) proxy_->note_("egress refused: " + why);
    std::string body = "stackie: " + why + "\n";
    send(client_.stream(),
         "HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body,
         nullptr);
    // Close once the answer is out: a shutdown completes after pending writes.
    auto* req = new uv_shutdown_t;
    req->data = this;
    if (uv_shutdown(req, client_.stream(), [](uv_shutdown_t* r, int) {
          auto* self = static_cast<EgressTunnel*>(r->data);
          delete r;
          self->close_all();
        }) != 0) {
      delete req;
      close_all();
    }
  }

  void close_all() {
    if (closing_) return;
    closing_ = true;
    if (lookup_ != nullptr) lookup_->tunnel = nullptr;
    if (proxy_ != nullptr) proxy_->tunnels_.erase(this);
    auto closed = [this] {
      if (--open_handles_ == 0) delete this;
    };
    client_.close(closed);  // each a no-op for a handle never made
    upstream_.close(closed);
  }

  EgressProxy* proxy_;
  uv_loop_t* loop_;
  UvHandle<uv_tcp_t> client_;
  UvHandle<uv_tcp_t> upstream_;
  Lookup* lookup_ = nullptr;
  int open_handles_ = 0;
  int eofs_ = 0;
  bool closing_ = false;
  bool connect_ = false;
  std::string head_;
  std::string destination_;
};

EgressProxy::EgressProxy(uv_loop_t* loop, std::vector<std::string> allow, Note note)
    : loop_(loop), allow_(std::move(allow)), note_(std::move(note)) {}

EgressProxy::~EgressProxy() {
  for (EgressTunnel* tunnel : std::set<EgressTunnel*>(tunnels_)) tunnel->abort();
}  // listener_ closes itself

Result<std::unique_ptr<EgressProxy>> EgressProxy::adopt(uv_loop_t* loop, int fd,
                                                        std::vector<std::string> allow, Note note) {
  std::unique_ptr<EgressProxy> proxy(new EgressProxy(loop, std::move(allow), std::move(note)));
  proxy->listener_.init([loop](uv_tcp_t* h) { return uv_tcp_init(loop, h); }, proxy.get());
  if (int rc = uv_tcp_open(proxy->listener_.get(), fd); rc != 0) {
    ::close(fd);
    return Error{rc, std::string("egress proxy: ") + uv_strerror(rc)};
  }
  int rc = uv_listen(proxy->listener_.stream(), 128, [](uv_stream_t* server, int status) {
    if (status == 0) static_cast<EgressProxy*>(server->data)->accept_one();
  });
  if (rc != 0) return Error{rc, std::string("egress proxy: ") + uv_strerror(rc)};
  return proxy;
}

void EgressProxy::accept_one() {
  auto* tunnel = new EgressTunnel(this);
  if (uv_accept(listener_.stream(), tunnel->client()) != 0 || tunnels_.size() >= kMaxTunnels) {
    tunnel->abort();
    return;
  }
  tunnels_.insert(tunnel);
  tunnel->start();
}

bool EgressProxy::allowed(const std::vector<std::string>& allow, const std::string& destination) {
  if (allow.empty()) return true;
  for (const auto& pattern : allow)
    if (::fnmatch(pattern.c_str(), destination.c_str(), 0) == 0) return true;
  return false;
}

}  // namespace stackie
