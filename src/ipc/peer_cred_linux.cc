// SO_PEERCRED: the credentials the peer had when it called connect() (or socketpair()),
// recorded by the kernel; see unix(7).
#include <sys/socket.h>

#include <cerrno>

#include "ipc/peer_cred.h"

namespace stackie::ipc {

Result<PeerCredentials> peer_credentials(int socket_fd) {
  struct ucred credentials {};
  socklen_t length = sizeof credentials;
  if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
    return system_error(errno, "cannot read the peer's credentials (SO_PEERCRED)");
  return PeerCredentials{credentials.uid, credentials.gid, credentials.pid};
}

}  // namespace stackie::ipc
