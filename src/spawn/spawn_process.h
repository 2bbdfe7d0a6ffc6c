// Shared uv_spawn plumbing of the Unix spawners (passthrough and lockbox). Internal to the
// sandbox module: the daemon sees only spawner.h.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/uv_handle.h"
#include "spawn/spawner.h"

namespace stackie::spawn_detail {

// A pipe libuv creates for the child at the next stdio index after the extra fds (Windows: a
// child's C runtime finds it as that fd). `child_reads`: the child reads it (we write).
struct ExtraPipe {
  uv_pipe_t* pipe = nullptr;  // initialised (uv_pipe_init), unopened
  bool child_reads = false;
};

// Extra fds for the child, at index 3, 4, ... of its fd table, then the extra pipes.
struct SpawnPlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "K=V"
  std::string cwd;               // empty = inherit
  std::vector<int> extra_fds;
  std::vector<ExtraPipe> extra_pipes;
  bool new_session = false;  // setsid(): own session and process group (pgid == pid)
  // Windows: a console of its own with no window (CREATE_NO_WINDOW). Without it, a console
  // program started by a daemon that has no console gets a new console window on the desktop.
  bool no_console_window = false;
  // Linux, a lockbox's plan the zygote forks: which namespaces its spare may make before the
  // request (sandbox/zygote_protocol.h kAhead*; 0: none).
  uint32_t zygote_ahead = 0;
};

// A started child as the spawners' facades see it: one uv_spawn made (ProcessCore) or one the
// lockbox's zygote forked (zygote_client.h). Each owns itself once its facade is gone.
class ChildProcess {
 public:
  using OnExit = std::function<void(int64_t exit_status, int term_signal)>;
  virtual int pid() const = 0;
  virtual bool running() const = 0;
  // Sends `signum` to this very process, never to another that got its pid later; nothing
  // once it has exited. 0 or a negative errno.
  virtual int send_signal(int signum) = 0;
  // The facade goes away: stop reporting, SIGKILL via `kill_all` if still running, free later.
  virtual void orphan(const std::function<void()>& kill_all) = 0;

 protected:
  ~ChildProcess() = default;
};

// The uv_process_t and its lifetime. It owns itself once its facade is gone: a process handle
// closed before its exit is never reaped (a zombie), so the core waits for the exit, then
// closes the handle and frees itself in the close callback.
class ProcessCore final : public ChildProcess {
 public:
  static Result<ProcessCore*> start(uv_loop_t* loop, const SpawnPlan& plan, uv_pipe_t* out,
                                    uv_pipe_t* err, OnExit on_exit);
  int pid() const override { return pid_; }
  bool running() const override { return running_; }
  // libuv reaps on the loop and reports at once, so a running core's pid is still its own.
  int send_signal(int signum) override { return running_ ? uv_kill(pid_, signum) : 0; }
  // The libuv handle (Windows: its process_handle goes into the daemon's job).
  uv_process_t* process() const { return handle_.get(); }
  void orphan(const std::function<void()>& kill_all) override;

 private:
  static void on_process_exit(uv_process_t* handle, int64_t exit_status, int term_signal);
  void close();
  UvHandle<uv_process_t> handle_;
  int pid_ = 0;
  bool running_ = true;
  bool orphaned_ = false;
  OnExit on_exit_;
};

std::vector<std::string> environment_of(const SandboxPolicy& policy);

}  // namespace stackie::spawn_detail
