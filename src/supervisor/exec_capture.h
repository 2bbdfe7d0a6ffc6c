// A command run by the daemon on its loop with its output captured, for clients that have no
// terminal to relay to (the HTTP API's exec, the MCP server's exec_in_sandbox): stdin is
// /dev/null, stdout and stderr are pipes kept up to a cap each (the rest counted, not kept),
// and at its timeout the command's process group gets SIGTERM, then SIGKILL two seconds later.
// The answer comes once the command exited: what it left in the pipes then is taken, and a
// grandchild that keeps them open is not waited for. The command's words are the block's own
// (already wrapped in `stackie-lockbox --join` for a sandboxed block); its output is the
// block's words too, which is why it is only ever data in a JSON string.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/json.h"

namespace stackie {

inline constexpr std::size_t kExecCaptureCap = 64 * 1024;
inline constexpr std::chrono::seconds kExecCaptureDefaultTimeout{30};
inline constexpr std::chrono::seconds kExecCaptureMostTimeout{300};

struct CapturedOutput {
  std::string kept;    // the first `cap` bytes
  uint64_t bytes = 0;  // all it wrote
  bool truncated() const { return bytes > kept.size(); }
};

struct CapturedExit {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  CapturedOutput out, err;
};

struct CaptureRequest {
  std::vector<std::string> argv;  // argv[0] a path, or a name searched in env's PATH
  std::vector<std::string> env;   // NAME=VALUE: the whole environment
  std::string cwd;                // "" = the daemon's
  std::chrono::milliseconds timeout = kExecCaptureDefaultTimeout;
  std::size_t cap = kExecCaptureCap;
};

// `done` runs exactly once on the loop: with an Error when the command could not start, else
// with how it ended. Nothing the command does can hold the loop up.
void run_exec_capture(uv_loop_t* loop, const CaptureRequest& request,
                      std::function<void(Result<CapturedExit>)> done);

// The answer's JSON (stackie-ipc(7) `exec.run`, the API's POST .../exec): exit_code, signal,
// timed_out, timeout_s, stdout and stderr as {text, bytes, truncated}, output_cap_bytes.
Json captured_exit_json(const CapturedExit& exit, std::chrono::milliseconds timeout,
                        std::size_t cap);

}  // namespace stackie
