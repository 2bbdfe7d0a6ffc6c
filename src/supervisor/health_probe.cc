#include "supervisor/health_probe.h"

#include <unistd.h>  // close(): a socket from the block's namespace not handed to libuv

#include <csignal>
#include <cstring>

#include "base/uv_handle.h"
#include "supervisor/host_os.h"

namespace stackie {

PortAddress loopback_port_address() {
  return [](int port) -> Result<sockaddr_storage> {
    sockaddr_storage storage{};
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    if (int rc = uv_ip4_addr("127.0.0.1", port, in); rc != 0)
      return Error{rc, std::string("address: ") + uv_strerror(rc)};
    return storage;
  };
}

namespace {

// The shared shape of an attempt: a timeout timer, a result reported at most once, and
// self-deletion once every handle is closed (libuv runs a handle's pending request callbacks
// before its close callback, so the attempt outlives every callback that names it).
class Attempt {
 public:
  Attempt(uv_loop_t* loop, ProbeDone done) : loop_(loop), done_(std::move(done)) {
    timer_.init([loop](uv_timer_t* timer) { return uv_timer_init(loop, timer); }, this);
    ++open_handles_;
  }
  virtual ~Attempt() = default;

  void arm(Milliseconds timeout) {
    uv_timer_start(
        timer_.get(),
        [](uv_timer_t* t) {
          auto* self = static_cast<Attempt*>(t->data);
          self->finish(false, "timed out");
        },
        static_cast<uint64_t>(timeout.count()), 0);
  }
  void cancel() {
    done_ = nullptr;
    finish(false, "cancelled");
  }

 protected:
  void finish(bool healthy, std::string detail) {
    if (finished_) return;
    finished_ = true;
    auto done = std::move(done_);
    done_ = nullptr;
    uv_timer_stop(timer_.get());
    close_handle(timer_);
    release();  // subclasses close their own handles (or wait for a process to exit)
    if (done) done(healthy, std::move(detail));
  }
  template <typename T>
  void close_handle(UvHandle<T>& handle) {
    handle.close([this] {
      if (--open_handles_ == 0) delete this;
    });
  }
  virtual void release() = 0;

  uv_loop_t* loop_;
  int open_handles_ = 0;
  bool finished_ = false;

 private:
  UvHandle<uv_timer_t> timer_;
  ProbeDone done_;
};

// tcp: connected = healthy. http: then GET and compare the status line.
class TcpAttempt final : public Attempt {
 public:
  TcpAttempt(uv_loop_t* loop, const HealthCheck& check, ProbeDone done)
      : Attempt(loop, std::move(done)), check_(check) {
    tcp_.init([loop](uv_tcp_t* tcp) { return uv_tcp_init(loop, tcp); }, this);
    ++open_handles_;
  }
  // With a source, the socket comes from inside the block's network namespace.
  void start(const sockaddr_storage& address, const std::function<void(SocketDone)>& source) {
    if (!source) return connect(address);
    ++open_handles_;  // the outstanding request keeps the attempt alive like a handle
    source([this, address](Result<int> socket) {
      if (finished_) {
        if (socket.ok()) ::close(*socket);
      } else if (!socket.ok()) {
        finish(false, socket.error().message);
      } else if (int rc = uv_tcp_open(tcp_.get(), *socket); rc != 0) {
        ::close(*socket);
        finish(false, std::string("socket: ") + uv_strerror(rc));
      } else {
        connect(address);
      }
      if (--open_handles_ == 0) delete this;
    });
  }

 private:
  void connect(const sockaddr_storage& address) {
    connect_.data = this;
    int rc = uv_tcp_connect(&connect_, tcp_.get(), reinterpret_cast<const sockaddr*>(&address),
                            [](uv_connect_t* req, int status) {
                              auto* self = static_cast<TcpAttempt*>(req->data);
                              if (!self->finished_) self->connected(status);
                            });
    if (rc != 0) finish(false, std::string("connect: ") + uv_strerror(rc));
  }

  void connected(int status) {
    if (status != 0) return finish(false, std::string("connect: ") + uv_strerror(status));
    if (check_.kind == HealthCheck::Kind::tcp) return finish(true, "connected");
    request_ = "GET " + check_.http_path +
               " HTTP/1.0\r\nHost: 127.0.0.1\r\nUser-Agent: stackied\r\nConnection: close\r\n\r\n";
    uv_buf_t request = uv_buf_init(request_.data(), static_cast<unsigned>(request_.size()));
    write_.data = this;
    uv_write(&write_, tcp_.stream(), &request, 1, [](uv_write_t* req, int rc) {
      auto* self = static_cast<TcpAttempt*>(req->data);
      if (rc != 0 && !self->finished_) self->finish(false, std::string("send: ") + uv_strerror(rc));
    });
    uv_read_start(
        tcp_.stream(),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* self = static_cast<TcpAttempt*>(h->data);
          *buf = uv_buf_init(self->scratch_, sizeof self->scratch_);
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* self = static_cast<TcpAttempt*>(s->data);
          if (self->finished_) return;
          if (n > 0) self->response_.append(buf->base, static_cast<size_t>(n));
          if (n < 0 || self->response_.find("\r\n") != std::string::npos ||
              self->response_.size() > 1024)
            self->judge();
        });
  }
  // "HTTP/1.1 200 OK"
  void judge() {
    std::string line = response_.substr(0, response_.find("\r\n"));
    int status = 0;
    if (line.rfind("HTTP/", 0) == 0) {
      size_t space = line.find(' ');
      if (space != std::string::npos) status = std::atoi(line.c_str() + space + 1);
    }
    if (status == 0) return finish(false, "no HTTP status line in the response");
    if (status != check_.http_status)
      return finish(false, "HTTP status " + std::to_string(status) + ", expected " +
                               std::to_string(check_.http_status));
    finish(true, "HTTP status " + std::to_string(status));
  }
  void release() override { close_handle(tcp_); }

  HealthCheck check_;
  UvHandle<uv_tcp_t> tcp_;
  uv_connect_t connect_{};
  uv_write_t write_{};
  std::string request_;
  std::string response_;
  char scratch_[1024];
};

// exec: exit status 0 = healthy. On timeout (or cancel) the command's group is killed and the
// handle closed only after its exit, so that it is reaped.
class ExecAttempt final : public Attempt {
 public:
  ExecAttempt(uv_loop_t* loop, ProbeDone done) : Attempt(loop, std::move(done)) {}
  void start(const ProbeTarget& target) {
    std::vector<char*> args, env;
    for (const auto& a : target.exec_argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : target.exec_env) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
    uv_stdio_container_t stdio[3];
    for (auto& slot : stdio) slot.flags = UV_IGNORE;
    uv_process_options_t options{};
    options.file = args[0];
    options.args = args.data();
    options.env = env.data();
    options.stdio_count = 3;
    options.stdio = stdio;
    options.flags = helper_process_flags();  // killed as one (host_os.h)
    options.exit_cb = [](uv_process_t* p, int64_t status, int signum) {
      auto* self = static_cast<ExecAttempt*>(p->data);
      self->exited_ = true;
      if (!self->finished_) {
        if (status == 0 && signum == 0) {
          self->finish(true, "exit 0");
        } else {
          self->finish(false, signum != 0 ? "killed by signal " + std::to_string(signum)
                                          : "exit status " + std::to_string(status));
        }
      }
      self->close_handle(self->process_);
    };
    if (int rc = process_.spawn(loop_, options, this); rc != 0) {
      exited_ = true;  // never started; spawn closed the handle
      finish(false, "cannot run " + target.exec_argv[0] + ": " + uv_strerror(rc));
      return;
    }
    ++open_handles_;
  }

 private:
  void release() override {
    if (!exited_) signal_helper(process_.get()->pid, SIGKILL);  // exit_cb closes the handle
  }
  UvHandle<uv_process_t> process_;
  bool exited_ = false;
};

// Keeps the attempt pointer valid for the handle until the attempt reports.
class ProbeWithResult final : public ProbeHandle {
 public:
  ~ProbeWithResult() override {
    if (*alive_ && attempt_ != nullptr) attempt_->cancel();
  }
  Attempt* attempt_ = nullptr;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace

std::unique_ptr<ProbeHandle> run_probe(uv_loop_t* loop, const HealthCheck& check,
                                       const ProbeTarget& target, ProbeDone done) {
  auto handle = std::make_unique<ProbeWithResult>();
  std::shared_ptr<bool> alive = handle->alive_;
  ProbeDone wrapped = [alive, done = std::move(done)](bool healthy, std::string detail) {
    *alive = false;
    if (done) done(healthy, std::move(detail));
  };
  if (check.kind == HealthCheck::Kind::exec) {
    if (target.exec_argv.empty()) {
      wrapped(false, "the block is not running");
      return handle;
    }
    auto* attempt = new ExecAttempt(loop, std::move(wrapped));
    handle->attempt_ = attempt;
    attempt->arm(check.timeout);
    attempt->start(target);
    return handle;
  }
  auto address = target.address(check.port);
  if (!address.ok()) {
    wrapped(false, address.error().message);
    return handle;
  }
  auto* attempt = new TcpAttempt(loop, check, std::move(wrapped));
  handle->attempt_ = attempt;
  attempt->arm(check.timeout);
  attempt->start(*address, target.socket_source);
  return handle;
}

}  // namespace stackie
