// Who is at the other end of a connected Unix socket, as the kernel says (not as the peer
// claims). One file per platform: peer_cred_linux.cc (SO_PEERCRED), peer_cred_bsd.cc
// (getpeereid: macOS and the BSDs); on Windows server_endpoint_windows.cc reads the named pipe
// client's process token instead.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace stackie::ipc {

// uid_t and gid_t are 32-bit unsigned on Linux and macOS, pid_t 32-bit signed: the same types.
struct PeerCredentials {
  std::uint32_t uid = UINT32_MAX;  // POSIX; unset on Windows
  std::uint32_t gid = UINT32_MAX;
  std::int32_t pid = -1;  // -1 where the platform does not tell (getpeereid)
  std::string user_sid;   // Windows: the client's user SID ("S-1-5-21-..."); empty elsewhere
};

Result<PeerCredentials> peer_credentials(int socket_fd);

// Whether the process that made a listening socket (`peer`, as a client reads it) is gone or
// dying: killed with SIGKILL still pending, exiting, or a zombie. Such a process can hold its
// socket open for a while (a daemon killed in the middle of a slow system call closes its files
// only once that call returns), and the kernel goes on queueing connections on it that nobody
// will ever answer. False where the platform does not tell (no pid: getpeereid).
bool peer_is_exiting(const PeerCredentials& peer);

}  // namespace stackie::ipc
