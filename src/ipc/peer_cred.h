// Who is at the other end of a connected Unix socket, as the kernel says (not as the peer
// claims). One file per platform: peer_cred_linux.cc (SO_PEERCRED), peer_cred_bsd.cc
// (getpeereid: macOS and the BSDs).
#pragma once

#include <sys/types.h>

#include "base/error.h"

namespace stackie::ipc {

struct PeerCredentials {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = -1;  // -1 where the platform does not tell (getpeereid)
};

Result<PeerCredentials> peer_credentials(int socket_fd);

}  // namespace stackie::ipc
