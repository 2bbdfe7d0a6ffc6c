// getpeereid(3): macOS and the BSDs. It gives no pid (LOCAL_PEERPID would, on macOS only; the
// uid is what the security check needs).
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <type_traits>

#include "ipc/peer_cred.h"

namespace stackie::ipc {

Result<PeerCredentials> peer_credentials(int socket_fd) {
  uid_t uid;
  gid_t gid;
  if (getpeereid(socket_fd, &uid, &gid) != 0)
    return system_error(errno, "cannot read the peer's credentials (getpeereid)");
  static_assert(std::is_same_v<uid_t, std::uint32_t>);
  PeerCredentials peer;
  peer.uid = uid;
  peer.gid = gid;
  return peer;
}

bool peer_is_exiting(const PeerCredentials&) {
  return false;  // no pid to look at
}

}  // namespace stackie::ipc
