// The daemon's end of the lockbox's clone point (sandbox/zygote_protocol.h; Linux only): one
// `stackie-lockbox --zygote` per spawner, which forks each block's monitor instead of the daemon
// exec'ing a lockbox per block. Internal to the spawn module.
#pragma once

#include <uv.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/uv_handle.h"
#include "spawn/spawn_process.h"

namespace stackie::spawn_detail {

class ZygoteChild;

class Zygote {
 public:
  // Starts `lockbox --zygote` on `loop` (uv_spawn: in libuv's process list like any helper, so
  // it dies with the daemon). An error means the spawner execs lockboxes as before.
  static Result<std::unique_ptr<Zygote>> start(uv_loop_t* loop, const std::string& lockbox);
  // Closes the socket (the zygote exits; every monitor it forked dies with it).
  ~Zygote();
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // False once it died, broke its protocol, or retired.
  bool alive() const { return alive_; }
  // It retired: its last monitor ended, and it was told to exit (no process of the daemon's
  // stays behind while no block runs). Not a failure: the next spawn starts a new one.
  bool retired() const { return retired_; }
  int pid() const { return zygote_pid_; }
  // Forks a monitor that runs as `argv` would exec'd, with `fds` as its 0, 1, 2, 3, ... (the
  // caller keeps and closes its own copies). Waits for the zygote's answer (a fork: about a
  // tenth of a millisecond). on_exit runs once, on the loop, when the monitor has ended.
  // `ahead`: what the zygote's spare may make before the request (zygote_protocol.h).
  Result<ChildProcess*> spawn(const std::vector<std::string>& argv, const std::vector<int>& fds,
                              uint32_t ahead, ChildProcess::OnExit on_exit);
  // `plan` as ProcessCore::start would run it (argv, extra fds; no env, cwd or pipes of its
  // own: the lockbox's plan has none), its stdout and stderr wired to `out` and `err` as
  // ProcessCore::start does (a pipe each; nullptr = /dev/null).
  Result<ChildProcess*> start_child(const SpawnPlan& plan, uv_pipe_t* out, uv_pipe_t* err,
                                    const ChildProcess::OnExit& on_exit);

 private:
  explicit Zygote(uv_loop_t* loop) : loop_(loop) {}
  void on_readable();
  void dispatch(int pid, int wait_status);
  void on_gone();
  void retire();
  static void on_process_exit(uv_process_t* handle, int64_t, int);

  uv_loop_t* loop_;
  int socket_ = -1;
  int zygote_pid_ = 0;
  bool alive_ = true;
  bool retired_ = false;
  bool spawning_ = false;  // inside spawn(): exits dispatched meanwhile must not retire it
  // Not a UvHandle: closing a process handle before its exit would leave the zygote unreaped
  // (libuv reaps only the processes it still tracks). The handle is closed once it exited:
  // here, or by on_process_exit when this object went first.
  uv_process_t* process_ = nullptr;
  bool process_exited_ = false;
  UvHandle<uv_poll_t> poll_;
  std::map<int, ZygoteChild*> children_;  // running monitors, by pid
};

}  // namespace stackie::spawn_detail
