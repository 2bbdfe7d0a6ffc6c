#include "supervisor/launchd_activation.h"

#include <cerrno>
#include <string>

namespace stackie {

Result<int> launchd_activation_outcome(int error, const std::vector<int>& fds) {
  // ESRCH: this process is not managed by launchd (started by hand, by stackie, by a test).
  // ENOENT: launchd runs us, but the plist has no Sockets entry of that name.
  if (error == ESRCH || error == ENOENT) return -1;
  if (error == EALREADY)
    return Error{-EALREADY, std::string("launchd already handed out the socket '") +
                                kLaunchdSocketName +
                                "' (is another stackied of this agent running?)"};
  if (error != 0)
    return system_error(error, std::string("launch_activate_socket '") + kLaunchdSocketName + "'");
  if (fds.size() != 1)
    return Error{-EINVAL, "launchd passed " + std::to_string(fds.size()) +
                              " sockets for the Sockets entry '" + kLaunchdSocketName +
                              "'; stackied serves exactly one (one SockPathName)"};
  return fds[0];
}

}  // namespace stackie
