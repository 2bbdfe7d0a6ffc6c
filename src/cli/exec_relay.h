// `stackie exec`'s side of CMD's stdio (issue 14). CMD runs inside a sandbox that may be
// hostile, so it never gets the caller's descriptors: its fds 0-2 are a pty made for it (when
// the caller's stdin is a terminal) or pipes, and this process relays between them and the
// caller's own stdio. The pty's master never leaves this process, so once CMD is done (and the
// master closed) nothing left in the sandbox can reach the caller's terminal.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"

namespace stackie::cli {

// Starts argv[0] (a path: the lockbox) with `env` as its whole environment, in its own process
// group, with cwd "/" and no fd of ours but the fresh 0-2. Relays until it exits, forwarding
// INT TERM HUP QUIT USR1 USR2 to it and the terminal's size changes to the pty. The caller's
// terminal is in raw mode meanwhile (^C, ^Z, ^\ reach CMD as keys) and restored on every
// return. Returns the child's exit status (128+N when killed by signal N).
Result<int> run_relayed(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// A passthrough block's CMD: no sandbox to keep out, so it runs on the caller's own stdio, in
// `cwd` (a warning when that fails), with `env` as its whole environment unless `keep_env`.
// POSIX: this process becomes CMD (execvp, searching the block's PATH), so it returns only
// when that fails: 127. Windows (exec_relay_windows.cc): CMD runs as a child and its exit
// code is returned.
int run_directly(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 bool keep_env, const std::string& cwd);

}  // namespace stackie::cli
