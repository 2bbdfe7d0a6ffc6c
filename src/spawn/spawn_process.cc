#include "spawn/spawn_process.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

#if !defined(_WIN32)
#include "base/posix_io.h"
#endif

namespace stackie::spawn_detail {

std::vector<std::string> environment_of(const SandboxPolicy& policy) {
  std::vector<std::string> env;
  env.reserve(policy.environment.size());
  for (const auto& [key, value] : policy.environment) env.push_back(key + "=" + value);
  return env;
}

namespace {

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Result<ProcessCore*> ProcessCore::start(uv_loop_t* loop, const SpawnPlan& plan, uv_pipe_t* out,
                                        uv_pipe_t* err, OnExit on_exit) {
  if (plan.argv.empty()) return Error{UV_EINVAL, "empty command"};
  auto args = c_strings(plan.argv);
  auto env = c_strings(plan.env);

  std::vector<uv_stdio_container_t> stdio(3 + plan.extra_fds.size() + plan.extra_pipes.size());
  stdio[0].flags = UV_IGNORE;
  // The child's ends of its output pipes: ours to close once it has them (or failed to start).
  std::vector<int> child_ends;
  struct CloseChildEnds {
    std::vector<int>& fds;
    ~CloseChildEnds() {
      for (int fd : fds) ::close(fd);
    }
  } close_child_ends{child_ends};
  auto wire = [&child_ends](uv_stdio_container_t& slot, uv_pipe_t* pipe) -> Status {
    if (pipe == nullptr) {
      slot.flags = UV_IGNORE;
      return {};
    }
#if defined(_WIN32)
    (void)child_ends;  // libuv's named pipe: its ends are libuv's
    slot.flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    slot.data.stream = reinterpret_cast<uv_stream_t*>(pipe);
#else
    // A pipe(2), where libuv's UV_CREATE_PIPE would make a socketpair: a pipe can grow
    // (F_SETPIPE_SZ, output_pipe.cc) so that a flooding block writes on while the daemon is
    // busy, and a write to it costs the block less than a socket's (issue 25: bench/logs).
    int fds[2];
    if (pipe_cloexec(fds) != 0) return system_error(errno, "cannot make an output pipe");
    if (int rc = uv_pipe_open(pipe, fds[0]); rc != 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return Error{rc, std::string("cannot open an output pipe: ") + uv_strerror(rc)};
    }
    child_ends.push_back(fds[1]);
    slot.flags = UV_INHERIT_FD;
    slot.data.fd = fds[1];
#endif
    return {};
  };
  STACKIE_TRY(wire(stdio[1], out));
  STACKIE_TRY(wire(stdio[2], err));
  for (size_t i = 0; i < plan.extra_fds.size(); ++i) {
    stdio[3 + i].flags = UV_INHERIT_FD;
    stdio[3 + i].data.fd = plan.extra_fds[i];
  }
  for (size_t i = 0; i < plan.extra_pipes.size(); ++i) {
    uv_stdio_container_t& slot = stdio[3 + plan.extra_fds.size() + i];
    slot.flags = static_cast<uv_stdio_flags>(
        UV_CREATE_PIPE | (plan.extra_pipes[i].child_reads ? UV_READABLE_PIPE : UV_WRITABLE_PIPE));
    slot.data.stream = reinterpret_cast<uv_stream_t*>(plan.extra_pipes[i].pipe);
  }

  uv_process_options_t options{};
  options.file = args[0];
  options.args = args.data();
  options.env = env.data();
  options.cwd = plan.cwd.empty() ? nullptr : plan.cwd.c_str();
  options.stdio_count = static_cast<int>(stdio.size());
  options.stdio = stdio.data();
  options.exit_cb = &ProcessCore::on_process_exit;
  if (plan.new_session) options.flags |= UV_PROCESS_DETACHED;
  if (plan.no_console_window) options.flags |= UV_PROCESS_WINDOWS_HIDE_CONSOLE;

  auto core = std::unique_ptr<ProcessCore>(new ProcessCore());
  core->on_exit_ = std::move(on_exit);
  // UvHandle::spawn closes the handle itself when uv_spawn fails.
  if (int rc = core->handle_.spawn(loop, options, core.get()); rc != 0)
    return Error{rc, "cannot run " + plan.argv[0] + ": " + uv_strerror(rc)};
  core->pid_ = core->handle_.get()->pid;
  return core.release();
}

void ProcessCore::on_process_exit(uv_process_t* handle, int64_t exit_status, int term_signal) {
  auto* core = static_cast<ProcessCore*>(handle->data);
  core->running_ = false;
  if (!core->orphaned_ && core->on_exit_) {
    // The callback may destroy the facade, which orphans (and closes) this core.
    auto callback = core->on_exit_;
    callback(exit_status, term_signal);
    return;
  }
  if (core->orphaned_) core->close();
}

void ProcessCore::orphan(const std::function<void()>& kill_all) {
  orphaned_ = true;
  on_exit_ = nullptr;
  if (running_) {
    kill_all();  // the exit callback closes us
    return;
  }
  close();
}

void ProcessCore::close() {
  handle_.close([this] { delete this; });  // idempotent: a second call finds no handle
}

}  // namespace stackie::spawn_detail
