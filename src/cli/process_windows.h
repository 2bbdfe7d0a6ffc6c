// Windows only: starting a program with CreateProcessW and waiting for its exit code, for the
// stackied started on demand (cli_daemon_windows.cc) and `stackie exec`'s command
// (exec_relay_windows.cc). The child inherits exactly its three stdio handles, nothing else
// of ours (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), and is put in no job of ours.
#pragma once

#include <windows.h>

#include <string>
#include <vector>

#include "base/error.h"

namespace stackie::cli {

struct ChildSpec {
  // argv[0]: a path, or a name CreateProcessW searches (adding .exe; our directory, then PATH).
  std::vector<std::string> argv;
  const std::vector<std::string>* env = nullptr;  // NAME=VALUE, the whole of it; null: ours
  std::string cwd;                                // empty: ours
  HANDLE stdio[3] = {nullptr, nullptr, nullptr};  // null: ours
};

// The running child's process handle (the caller closes it).
Result<HANDLE> start_process(const ChildSpec& spec);
// Waits for the process and returns its exit code.
int wait_for_exit(HANDLE process);

// The absolute path of stackied.exe: beside this stackie.exe, else the first in PATH's own
// directories (never the current directory, which Windows' own search tries first: a
// stackied.exe in a project must not run as the user). Empty when there is none.
// (cli_daemon_windows.cc; `up`, `daemon start` and `daemon install` use it.)
std::string find_daemon_program();

}  // namespace stackie::cli
