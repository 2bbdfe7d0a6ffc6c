// Windows only: whose process is at the other end of a named pipe. The daemon and the CLI
// compare user SIDs the way POSIX compares uids (SO_PEERCRED), from the process token.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace stackie::ipc {

struct ProcessIdentity {
  std::string user_sid;     // "S-1-5-21-..."
  bool restricted = false;  // a restricted token (a Stackie block, or any sandboxed process)
  std::string program;      // process_identity only: its image's file name ("stackied.exe")
};

// The identity of process `pid` (its primary token, its image), read through one handle.
Result<ProcessIdentity> process_identity(std::uint32_t pid);
// Ours.
Result<ProcessIdentity> own_identity();
// The client of the named pipe `pipe` (a HANDLE), from its own token: the server impersonates
// it for the moment of reading the token, then reverts. Unlike a pid, a token cannot be reused
// by another process. Windows allows it only after a message was read from the pipe.
Result<ProcessIdentity> pipe_client_identity(void* pipe);
// "\\.\pipe\..." (either slash form): the only daemon addresses on Windows.
bool is_pipe_name(const std::string& name);

}  // namespace stackie::ipc
