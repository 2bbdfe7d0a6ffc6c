// SO_PEERCRED: the credentials the peer had when it called connect() (or socketpair()),
// recorded by the kernel; see unix(7).
#include <sys/socket.h>

#include <cerrno>
#include <type_traits>

#include "ipc/peer_cred.h"

namespace stackie::ipc {

Result<PeerCredentials> peer_credentials(int socket_fd) {
  struct ucred credentials {};
  socklen_t length = sizeof credentials;
  if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
    return system_error(errno, "cannot read the peer's credentials (SO_PEERCRED)");
  static_assert(std::is_same_v<uid_t, std::uint32_t> && std::is_same_v<pid_t, std::int32_t>);
  PeerCredentials peer;
  peer.uid = credentials.uid;
  peer.gid = credentials.gid;
  peer.pid = credentials.pid;
  return peer;
}

}  // namespace stackie::ipc
