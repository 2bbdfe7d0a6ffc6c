// How a command joins a running block, from the daemon's `exec` reply (stackie-ipc(7)): the
// `stackie-lockbox --join` words before CMD (or the reply's own `launcher` words, ending in
// "--", where the daemon has another way in), and CMD's environment and working directory.
// Shared by `stackie exec` and the MCP server's exec_in_sandbox, so both join the same way.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "base/json.h"

namespace stackie::cli {

struct ExecPlan {
  // The launcher's words up to and including "--" (empty for a passthrough block: CMD runs
  // directly, searched in the block's PATH, in `cwd`).
  std::vector<std::string> prefix;
  std::vector<std::string> env;  // NAME=VALUE: the block's, the whole of CMD's environment
  std::string cwd;
  bool passthrough = false;  // the reply's "sandbox" says so; never inferred from `prefix`
  bool sandboxed() const { return !passthrough; }
};

// `environment` is the reply's, possibly with additions (the caller's TERM). Fails closed: a
// sandboxed block whose reply gives no launcher (or a malformed one) is an error, never a
// command run outside the sandbox.
Result<ExecPlan> exec_plan(const Json& reply, const Json& environment);

}  // namespace stackie::cli
