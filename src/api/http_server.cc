// Ownership as in ipc/server.cc: the server's map owns each connection (shared_ptr), every write
// in flight holds one too, libuv handles are owned by UvHandle. http_parser.h is included here
// only (tools/check_layout.py).
#include "api/http_server.h"

#include <http_parser.h>
#include <uv.h>

#include <cctype>
#include <climits>
#include <cstring>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/uv_handle.h"

namespace stackie::api {

namespace {

constexpr std::size_t kReadBufferSize = 16 * 1024;

const char* reason_of(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string error_body(std::string_view code, std::string_view message) {
  return to_json(Json::object(
      {{"error", Json::object({{"code", std::string(code)}, {"message", std::string(message)}})}}));
}

struct HttpConnection;

struct HttpServer::Impl {
  uv_loop_t* loop;
  HttpRouter router;
  HttpLog log;
  HttpLimits limits;
  int port = 0;
  UvHandle<uv_tcp_t> listener;
  std::map<std::uint64_t, std::shared_ptr<HttpConnection>> connections;
  std::uint64_t next_serial = 1;
  bool closing = false;

  void accept_connection();
  void say(const std::string& message) const {
    if (log) log("api: " + message);
  }
};

struct HttpConnection : HttpResponder, std::enable_shared_from_this<HttpConnection> {
  HttpConnection(HttpServer::Impl* server_in, std::uint64_t serial_in)
      : server(server_in), serial(serial_in), buffer(new char[kReadBufferSize]) {
    http_parser_init(&parser, HTTP_REQUEST);
    parser.data = this;
  }

  // HttpResponder
  bool alive() const override { return !closed && !finished; }
  void complete(int status, const std::string& json_body,
                const std::map<std::string, std::string>& extra_headers) override;
  void start_stream() override;
  bool event(std::string_view name, const std::string& data) override;
  void end() override;
  void on_gone(std::function<void()> gone_in) override { gone = std::move(gone_in); }

  void start();
  void on_read(ssize_t nread, const uv_buf_t* buf);
  void on_complete();
  void refuse(int status, std::string_view code, const std::string& message);
  void write(std::string data);
  void on_written(int status);
  void close_now();
  bool head_grows(std::size_t bytes);

  HttpServer::Impl* server;  // nullptr once the server is gone
  std::uint64_t serial;
  std::unique_ptr<char[]> buffer;
  UvHandle<uv_tcp_t> tcp;
  UvHandle<uv_timer_t> deadline;
  http_parser parser{};
  HttpRequest request;
  std::string url;
  std::string field, value;
  bool in_value = false;
  std::size_t head_bytes = 0;
  bool message_done = false;  // the whole request arrived
  bool answered = false;      // complete() or start_stream() happened
  bool streaming = false;
  bool finished = false;  // complete() or end(): closes once written
  bool closed = false;
  std::size_t writes_in_flight = 0;
  std::function<void()> gone;
};

namespace {

struct Write {
  uv_write_t request{};
  std::string data;
  std::shared_ptr<HttpConnection> connection;
};

HttpConnection* of(http_parser* parser) {
  return static_cast<HttpConnection*>(parser->data);
}

void flush_header(HttpConnection& c) {
  if (!c.field.empty()) c.request.headers[lower(c.field)] = c.value;
  c.field.clear();
  c.value.clear();
  c.in_value = false;
}

int on_url(http_parser* p, const char* at, std::size_t length) {
  auto& c = *of(p);
  if (!c.head_grows(length)) return 1;
  c.url.append(at, length);
  return 0;
}

int on_header_field(http_parser* p, const char* at, std::size_t length) {
  auto& c = *of(p);
  if (!c.head_grows(length)) return 1;
  if (c.in_value) flush_header(c);
  c.field.append(at, length);
  return 0;
}

int on_header_value(http_parser* p, const char* at, std::size_t length) {
  auto& c = *of(p);
  if (!c.head_grows(length)) return 1;
  c.in_value = true;
  c.value.append(at, length);
  return 0;
}

int on_headers_complete(http_parser* p) {
  auto& c = *of(p);
  flush_header(c);
  if (p->content_length != ULLONG_MAX && p->content_length > c.server->limits.max_body) {
    c.refuse(
        413, "too_large",
        "a request body may be at most " + std::to_string(c.server->limits.max_body) + " bytes");
    return 1;
  }
  return 0;
}

int on_body(http_parser* p, const char* at, std::size_t length) {
  auto& c = *of(p);
  if (c.request.body.size() + length > c.server->limits.max_body) {
    c.refuse(
        413, "too_large",
        "a request body may be at most " + std::to_string(c.server->limits.max_body) + " bytes");
    return 1;
  }
  c.request.body.append(at, length);
  return 0;
}

int on_message_complete(http_parser* p) {
  auto& c = *of(p);
  c.message_done = true;
  http_parser_pause(p, 1);  // one request per connection: whatever follows is not read
  return 0;
}

const http_parser_settings kSettings = [] {
  http_parser_settings s{};
  s.on_url = on_url;
  s.on_header_field = on_header_field;
  s.on_header_value = on_header_value;
  s.on_headers_complete = on_headers_complete;
  s.on_body = on_body;
  s.on_message_complete = on_message_complete;
  return s;
}();

void on_alloc(uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
  auto* c = static_cast<HttpConnection*>(handle->data);
  *buf = c ? uv_buf_init(c->buffer.get(), kReadBufferSize) : uv_buf_init(nullptr, 0);
}

void on_read_callback(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  if (auto* c = static_cast<HttpConnection*>(stream->data)) c->on_read(nread, buf);
}

void on_write_callback(uv_write_t* request, int status) {
  auto* write = static_cast<Write*>(request->data);
  std::shared_ptr<HttpConnection> c = std::move(write->connection);
  delete write;
  c->on_written(status);
}

// Host must name this listener as a local client would: 127.0.0.1:PORT or localhost:PORT.
bool host_allowed(const std::string& host, int port) {
  std::string wanted_port = ":" + std::to_string(port);
  std::string h = lower(host);
  return h == "127.0.0.1" + wanted_port || h == "localhost" + wanted_port;
}

std::map<std::string, std::string> parse_query(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string key = percent_decode(pair.substr(0, eq), true);
    std::string val =
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
    out[key] = val;
  }
  return out;
}

}  // namespace

bool HttpConnection::head_grows(std::size_t bytes) {
  head_bytes += bytes;
  if (head_bytes <= server->limits.max_head) return true;
  refuse(431, "too_large",
         "the request line and headers may be at most " + std::to_string(server->limits.max_head) +
             " bytes");
  return false;
}

void HttpConnection::start() {
  auto self = shared_from_this();
  deadline.init([&](uv_timer_t* t) { return uv_timer_init(server->loop, t); }, this);
  uv_timer_start(
      deadline.get(),
      [](uv_timer_t* t) {
        auto* c = static_cast<HttpConnection*>(t->data);
        if (c && !c->message_done)
          c->refuse(408, "timeout",
                    "the request did not arrive within " +
                        std::to_string(c->server ? c->server->limits.request_ms : 0) + " ms");
      },
      server->limits.request_ms, 0);
  if (uv_read_start(tcp.stream(), on_alloc, on_read_callback) < 0) close_now();
}

void HttpConnection::on_read(ssize_t nread, const uv_buf_t* buf) {
  auto self = shared_from_this();
  if (nread == 0) return;
  if (nread < 0) {
    // The client went away (or half-closed): a request still arriving is abandoned, a stream
    // being read ends; an answer being prepared is still written if the socket takes it.
    uv_read_stop(tcp.stream());
    if (!message_done || streaming) {
      if (gone) std::exchange(gone, nullptr)();
      close_now();
    }
    return;
  }
  if (message_done) return;  // bytes after the one request: ignored, never buffered
  std::size_t parsed = http_parser_execute(&parser, &kSettings, buf->base, nread);
  if (closed || answered) return;  // a callback refused it
  auto error = HTTP_PARSER_ERRNO(&parser);
  if (error != HPE_OK && error != HPE_PAUSED) {
    refuse(400, "bad_request", std::string("malformed HTTP: ") + http_errno_description(error));
    return;
  }
  (void)parsed;
  if (message_done) on_complete();
}

void HttpConnection::on_complete() {
  deadline.close();
  request.method = http_method_str(static_cast<http_method>(parser.method));
  http_parser_url parts;
  http_parser_url_init(&parts);
  if (http_parser_parse_url(url.data(), url.size(), 0, &parts) != 0 ||
      !(parts.field_set & (1 << UF_PATH)))
    return refuse(400, "bad_request", "malformed request target");
  request.path = percent_decode(
      std::string_view(url).substr(parts.field_data[UF_PATH].off, parts.field_data[UF_PATH].len),
      false);
  // The raw path too: a block name may hold an encoded '/' (STACK%2FBLOCK).
  request.headers[":raw-path"] =
      url.substr(parts.field_data[UF_PATH].off, parts.field_data[UF_PATH].len);
  if (parts.field_set & (1 << UF_QUERY))
    request.query = parse_query(std::string_view(url).substr(parts.field_data[UF_QUERY].off,
                                                             parts.field_data[UF_QUERY].len));
  // DNS rebinding: a page of another name resolved to 127.0.0.1 sends its own name as Host.
  if (!host_allowed(request.header("host"), server->port))
    return refuse(421, "bad_host",
                  "Host must be 127.0.0.1:" + std::to_string(server->port) +
                      " or localhost:" + std::to_string(server->port));
  // A browser's cross-site request carries an Origin: no web page may drive the daemon.
  if (request.headers.count("origin") != 0)
    return refuse(403, "forbidden_origin", "requests from a web page (Origin) are refused");
  server->router(request, shared_from_this());
}

void HttpConnection::refuse(int status, std::string_view code, const std::string& message) {
  if (answered || closed) return;
  if (server) server->say("refused a client: " + std::to_string(status) + " " + message);
  complete(status, error_body(code, message), {});
}

void HttpConnection::complete(int status, const std::string& json_body,
                              const std::map<std::string, std::string>& extra_headers) {
  if (answered || closed) return;
  answered = true;
  finished = true;
  message_done = true;  // nothing more is read
  deadline.close();
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason_of(status) +
                     "\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
                     "Connection: close\r\nContent-Length: " +
                     std::to_string(json_body.size() + 1) + "\r\n";
  for (const auto& [name, val] : extra_headers) head += name + ": " + val + "\r\n";
  write(head + "\r\n" + json_body + "\n");
}

void HttpConnection::start_stream() {
  if (answered || closed) return;
  answered = true;
  streaming = true;
  write(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
      "Connection: close\r\nX-Accel-Buffering: no\r\n\r\n");
}

bool HttpConnection::event(std::string_view name, const std::string& data) {
  if (!streaming || closed || finished) return false;
  if (uv_stream_get_write_queue_size(tcp.stream()) >= server->limits.max_write_queue)
    return false;  // a client that does not read loses events, never grows our memory
  // `data` is one line of compact JSON (base/json.h never writes a raw newline).
  write("event: " + std::string(name) + "\ndata: " + data + "\n\n");
  return !closed;
}

void HttpConnection::end() {
  if (closed || finished) return;
  finished = true;
  if (writes_in_flight == 0) close_now();
}

void HttpConnection::write(std::string data) {
  if (closed) return;
  auto* w = new Write;
  w->data = std::move(data);
  w->connection = shared_from_this();
  w->request.data = w;
  uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  ++writes_in_flight;
  if (uv_write(&w->request, tcp.stream(), &buf, 1, on_write_callback) < 0) {
    --writes_in_flight;
    delete w;
    close_now();
  }
}

void HttpConnection::on_written(int status) {
  --writes_in_flight;
  if (status < 0) {
    if (gone && !finished) std::exchange(gone, nullptr)();
    close_now();
    return;
  }
  if (finished && writes_in_flight == 0) close_now();
}

void HttpConnection::close_now() {
  if (closed) return;
  closed = true;
  auto self = shared_from_this();
  tcp.close();
  deadline.close();
  if (server) {
    auto* s = server;
    server = nullptr;
    s->connections.erase(serial);
  }
}

void HttpServer::Impl::accept_connection() {
  auto c = std::make_shared<HttpConnection>(this, next_serial++);
  if (c->tcp.init([&](uv_tcp_t* t) { return uv_tcp_init(loop, t); }, c.get()) < 0) return;
  if (uv_accept(listener.stream(), c->tcp.stream()) < 0) {
    c->tcp.close();
    return;
  }
  connections[c->serial] = c;
  if (connections.size() > limits.max_connections) {
    c->refuse(503, "busy", "too many connections");
    return;
  }
  c->start();
}

HttpServer::HttpServer(uv_loop_s* loop, HttpRouter router, HttpLog log, HttpLimits limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->loop = loop;
  impl_->router = std::move(router);
  impl_->log = std::move(log);
  impl_->limits = limits;
}

HttpServer::~HttpServer() {
  close();
}

Status HttpServer::listen(int port) {
  if (port < 1 || port > 65535) return Error{UV_EINVAL, "API port must be 1..65535"};
  impl_->port = port;
  int status =
      impl_->listener.init([&](uv_tcp_t* t) { return uv_tcp_init(impl_->loop, t); }, impl_.get());
  if (status < 0) return Error{status, std::string("API listener: ") + uv_strerror(status)};
  sockaddr_in address{};
  uv_ip4_addr("127.0.0.1", port, &address);
  status = uv_tcp_bind(impl_->listener.get(), reinterpret_cast<const sockaddr*>(&address), 0);
  if (status == 0)
    status = uv_listen(impl_->listener.stream(), 128, [](uv_stream_t* l, int s) {
      auto* impl = static_cast<HttpServer::Impl*>(l->data);
      if (impl && s == 0) impl->accept_connection();
    });
  if (status < 0) {
    impl_->listener.close();
    return Error{status, "API on 127.0.0.1:" + std::to_string(port) + ": " + uv_strerror(status)};
  }
  return {};
}

void HttpServer::close() {
  if (impl_->closing) return;
  impl_->closing = true;
  impl_->listener.close();
  auto connections = impl_->connections;
  for (auto& [serial, c] : connections) {
    if (c->gone && !c->finished) std::exchange(c->gone, nullptr)();
    c->close_now();
  }
  impl_->connections.clear();
}

std::size_t HttpServer::connection_count() const {
  return impl_->connections.size();
}

}  // namespace stackie::api
