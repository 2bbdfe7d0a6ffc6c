// exec_in_sandbox's runner: a command on pipes (stdin /dev/null), its output captured up to a
// cap per stream, killed when its time is up. Unlike `stackie exec` nothing is relayed to a
// terminal: the MCP server's own stdin and stdout carry the protocol and must never reach the
// command (nor the sandbox behind it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace stackie::cli::mcp {

inline constexpr std::size_t kExecOutputCap = 64 * 1024;

struct CapturedStream {
  std::string kept;    // the first `cap` bytes
  uint64_t bytes = 0;  // all it wrote
  bool truncated() const { return bytes > kept.size(); }
};

struct CapturedRun {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  CapturedStream out, err;
};

// Runs argv (argv[0] a path, or a name searched in env's PATH when `search_path`) with `env` as
// its whole environment, in its own process group, in `cwd` ("/" when empty). At `timeout` the
// group gets SIGTERM, and SIGKILL two seconds later. An Error only when it could not start.
Result<CapturedRun> run_captured(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env, const std::string& cwd,
                                 bool search_path, std::chrono::milliseconds timeout,
                                 std::size_t cap = kExecOutputCap);

}  // namespace stackie::cli::mcp
