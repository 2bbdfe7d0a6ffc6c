// What can be known about a block's programs without running anything (`stackie validate` and
// the daemon's load): that each command and exec health check names a file that exists, is
// executable, and lies inside what the block's sandbox shows. A command that cannot exist is
// said at load time with its position, instead of as exit 127 after ten restarts.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"

namespace stackie {

// The program a shell command line runs first, when that can be told without a shell: the
// first word after `VAR=value` assignments and `exec`. Empty when the line starts with anything
// a shell would interpret (quotes, $, a builtin, a keyword, a subshell...): those are not
// checked. `offset` receives where the word starts in `line`.
std::string shell_program_word(const std::string& line, size_t* offset = nullptr);

struct ProgramCheck {
  std::string program;                  // as written: "./serve.sh", "redis-cli"
  std::string base_dir;                 // a relative path is relative to this (host path)
  std::vector<std::string> path;        // PATH inside the sandbox, for a bare name
  const SandboxPolicy* view = nullptr;  // nullptr: unsandboxed, anything on the host will do
};

// Ok with the absolute host path of the program, or a one-line reason ("./serve.sh not found
// (looked for /w/serve.sh)", "... is not executable", "... is outside the sandbox's view").
Result<std::string> check_program(const ProgramCheck& check);

}  // namespace stackie
