#include "supervisor/exec_capture.h"

#include <algorithm>
#include <csignal>

#include "base/uv_handle.h"
#include "supervisor/host_os.h"

namespace stackie {
namespace {

constexpr uint64_t kKillGraceMs = 2000;  // after SIGTERM at the timeout

void keep(CapturedOutput& output, const char* data, std::size_t n, std::size_t cap) {
  output.bytes += n;
  if (output.kept.size() < cap) output.kept.append(data, std::min(n, cap - output.kept.size()));
}

// One run: the process, its two pipes and the timer. Frees itself once all four are closed.
class Capture {
 public:
  Capture(uv_loop_t* loop, std::size_t cap, std::function<void(Result<CapturedExit>)> done)
      : loop_(loop), cap_(cap), done_(std::move(done)) {}

  void start(const CaptureRequest& request) {
    for (Sink* sink : {&out_, &err_}) {
      sink->owner = this;
      sink->pipe.init([this](uv_pipe_t* p) { return uv_pipe_init(loop_, p, 0); }, sink);
      ++open_handles_;
    }
    out_.output = &result_.out;
    err_.output = &result_.err;
    timer_.init([this](uv_timer_t* t) { return uv_timer_init(loop_, t); }, this);
    ++open_handles_;

    std::vector<char*> args, env;
    for (const auto& word : request.argv) args.push_back(const_cast<char*>(word.c_str()));
    args.push_back(nullptr);
    for (const auto& entry : request.env) env.push_back(const_cast<char*>(entry.c_str()));
    env.push_back(nullptr);
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_IGNORE;  // libuv gives the child /dev/null
    for (int fd : {1, 2}) {
      stdio[fd].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
      stdio[fd].data.stream = (fd == 1 ? out_ : err_).pipe.stream();
    }
    uv_process_options_t options{};
    options.file = args[0];  // searched in env's PATH when it has no slash
    options.args = args.data();
    options.env = env.data();
    options.cwd = request.cwd.empty() ? nullptr : request.cwd.c_str();
    options.stdio_count = 3;
    options.stdio = stdio;
    options.flags = helper_process_flags();  // killed as one (host_os.h)
    options.exit_cb = [](uv_process_t* process, int64_t status, int signum) {
      static_cast<Capture*>(process->data)->exited(status, signum);
    };
    if (int rc = process_.spawn(loop_, options, this); rc != 0) {
      exited_ = true;  // never started; spawn closed the handle
      finish(Error{rc, "cannot run " + request.argv[0] + ": " + uv_strerror(rc)});
      return;
    }
    ++open_handles_;
    pid_ = process_.get()->pid;
    for (Sink* sink : {&out_, &err_}) read(*sink);
    uv_timer_start(
        timer_.get(), [](uv_timer_t* t) { static_cast<Capture*>(t->data)->time_up(); },
        static_cast<uint64_t>(request.timeout.count()), 0);
  }

 private:
  struct Sink {
    Capture* owner = nullptr;
    CapturedOutput* output = nullptr;
    UvHandle<uv_pipe_t> pipe;
  };

  static void read(Sink& sink) {
    uv_read_start(
        sink.pipe.stream(),
        [](uv_handle_t*, size_t, uv_buf_t* buf) {
          static char scratch[65536];  // single-threaded loop; consumed before the next read
          *buf = uv_buf_init(scratch, sizeof scratch);
        },
        [](uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
          auto* into = static_cast<Sink*>(stream->data);
          if (n > 0) keep(*into->output, buf->base, static_cast<std::size_t>(n), into->owner->cap_);
          if (n < 0) uv_read_stop(stream);  // EOF: every writer is gone
        });
  }

  // What the command left in a pipe when it exited, read without waiting.
  void drain(Sink& sink) {
    char buffer[65536];
    for (int rounds = 0; rounds < 16; ++rounds) {  // bounded: a grandchild may keep writing
      size_t n = read_pipe_now(sink.pipe.get(), buffer, sizeof buffer);
      if (n == 0) break;
      keep(*sink.output, buffer, n, cap_);
    }
  }

  void time_up() {
    if (exited_) return;
    result_.timed_out = true;
    signal_helper(pid_, term_sent_ ? SIGKILL : SIGTERM);
    if (term_sent_) return;
    term_sent_ = true;
    uv_timer_start(
        timer_.get(), [](uv_timer_t* t) { static_cast<Capture*>(t->data)->time_up(); },
        kKillGraceMs, 0);
  }

  void exited(int64_t status, int signum) {
    exited_ = true;
    result_.signal = signum;
    result_.exit_code = signum != 0 ? -1 : static_cast<int>(status);
    for (Sink* sink : {&out_, &err_}) drain(*sink);
    finish(std::move(result_));
  }

  void finish(Result<CapturedExit> result) {
    auto done = std::move(done_);
    auto closed = [this] {
      if (--open_handles_ == 0) delete this;
    };
    out_.pipe.close(closed);
    err_.pipe.close(closed);
    timer_.close(closed);
    process_.close(closed);
    if (done) done(std::move(result));
  }

  uv_loop_t* loop_;
  std::size_t cap_;
  std::function<void(Result<CapturedExit>)> done_;
  UvHandle<uv_process_t> process_;
  Sink out_, err_;
  UvHandle<uv_timer_t> timer_;
  int open_handles_ = 0;
  int pid_ = 0;
  bool exited_ = false;
  bool term_sent_ = false;
  CapturedExit result_;
};

Json output_json(const CapturedOutput& output) {
  return Json::object({{"text", output.kept},
                       {"bytes", static_cast<int64_t>(output.bytes)},
                       {"truncated", output.truncated()}});
}

}  // namespace

void run_exec_capture(uv_loop_t* loop, const CaptureRequest& request,
                      std::function<void(Result<CapturedExit>)> done) {
  if (request.argv.empty()) return done(Error{UV_EINVAL, "no command"});
  auto* capture = new Capture(loop, request.cap, std::move(done));
  capture->start(request);
}

Json captured_exit_json(const CapturedExit& exit, std::chrono::milliseconds timeout,
                        std::size_t cap) {
  return Json::object(
      {{"exit_code", exit.exit_code >= 0 ? Json(exit.exit_code) : Json()},
       {"signal", exit.signal != 0 ? Json(exit.signal) : Json()},
       {"timed_out", exit.timed_out},
       {"timeout_s",
        static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(timeout).count())},
       {"stdout", output_json(exit.out)},
       {"stderr", output_json(exit.err)},
       {"output_cap_bytes", static_cast<int64_t>(cap)}});
}

}  // namespace stackie
