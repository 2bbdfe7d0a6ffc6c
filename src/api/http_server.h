// The HTTP API's listener (stackie-api(7)): TCP on 127.0.0.1 only, one request per connection
// (the answer ends with the connection, an SSE stream when the client goes), parsed by
// http-parser (libhttp-parser-dev) on the daemon's libuv loop. Every request is bounded like an
// IPC line: its head and body in bytes, its arrival in time. Before anything is routed, the
// request is checked the way a web page cannot pass: its Host must be 127.0.0.1:PORT or
// localhost:PORT (a DNS rebinding page sends its own name) and it must carry no Origin (a
// browser's fetch does). The bearer token is the router's business (api_routes.h): one public
// path needs none. The server never exits or stalls because of a client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"

struct uv_loop_s;

namespace stackie::api {

struct HttpLimits {
  std::size_t max_connections = 64;
  std::size_t max_head = 16 * 1024;    // request line and headers
  std::size_t max_body = 1024 * 1024;  // as an IPC line
  std::uint64_t request_ms = 10000;    // the whole request must have arrived by then
  std::size_t max_write_queue = std::size_t{4} << 20;  // past it an SSE stream skips events
};

struct HttpRequest {
  std::string method;                          // GET, POST, ...
  std::string path;                            // decoded, without the query
  std::map<std::string, std::string> query;    // decoded; the last of a repeated key wins
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// The answer to one request: either complete() once, or start_stream() then event()s and
// end(). Any call after the client went away is a no-op; alive() tells.
class HttpResponder {
 public:
  virtual ~HttpResponder() = default;
  virtual bool alive() const = 0;
  virtual void complete(int status, const std::string& json_body,
                        const std::map<std::string, std::string>& extra_headers = {}) = 0;
  virtual void start_stream() = 0;  // 200, text/event-stream
  // One SSE event; false when it was dropped (the client does not read) or the client is gone.
  virtual bool event(std::string_view name, const std::string& data) = 0;
  virtual void end() = 0;
  // Runs once when the client goes away before end()/complete() (a stream being read).
  virtual void on_gone(std::function<void()> gone) = 0;
};

using HttpRouter =
    std::function<void(const HttpRequest& request, std::shared_ptr<HttpResponder> responder)>;
using HttpLog = std::function<void(const std::string& message)>;

class HttpServer {
 public:
  HttpServer(uv_loop_s* loop, HttpRouter router, HttpLog log = {}, HttpLimits limits = {});
  ~HttpServer();  // closes what is still open; the loop must run once more to free handles
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on 127.0.0.1:port (never another address).
  Status listen(int port);
  void close();
  std::size_t connection_count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// %XX decoded (and '+' as a space in a query); a malformed escape stays as it is.
std::string percent_decode(std::string_view text, bool plus_is_space);

// The one JSON body of an error: {"error": {"code", "message"}} (as the IPC's error object).
std::string error_body(std::string_view code, std::string_view message);

}  // namespace stackie::api
