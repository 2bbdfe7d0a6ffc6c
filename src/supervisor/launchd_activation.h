// The daemon's side of launchd socket activation (launch_activate_socket(3), macOS 10.10+):
// when the LaunchAgent has a `Sockets` entry, launchd binds and listens on the daemon's socket
// itself and starts stackied on the first connection; stackied then serves that socket instead
// of binding its own. `stackie daemon install --socket-activation` writes such a plist
// (cli/service_units.h); without it, or when stackied was not started by launchd, it binds as
// everywhere else.
#pragma once

#include <vector>

#include "base/error.h"

namespace stackie {

// The name of the plist's Sockets entry the daemon asks launchd for.
inline constexpr char kLaunchdSocketName[] = "Listeners";

// What launch_activate_socket's outcome means for the daemon: `error` is its return value,
// `fds` the sockets it passed. Not started by launchd (ESRCH) or a plist without the entry
// (ENOENT): -1, bind as usual. Exactly one socket: that fd. Anything else (no socket, several,
// already taken, another error) is an error: a plist that passes sockets we cannot use must
// not start a daemon that binds its own beside them. The caller closes `fds` it does not use.
Result<int> launchd_activation_outcome(int error, const std::vector<int>& fds);

// Asks launchd for the Sockets entry kLaunchdSocketName: its listening socket (close-on-exec:
// never passed to a block), or -1 where there is none (and on every OS but macOS).
Result<int> take_launchd_socket();

}  // namespace stackie
