// The daemon's side of a service manager (systemd), without libsystemd: readiness and stop
// notifications (sd_notify(3)'s datagram protocol) and socket activation (sd_listen_fds(3)).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "stack/paths.h"

namespace stackie {

// Sends `state` ("READY=1", "STOPPING=1", ...) as one datagram to `address`: a socket path, or
// "@name" for Linux's abstract namespace.
Status send_service_notification(const std::string& address, const std::string& state);
// The same to $NOTIFY_SOCKET when it is set; a failure is ignored (the manager times us out).
void notify_service_manager(const std::string& state);

// The first fd systemd passes (SD_LISTEN_FDS_START).
inline constexpr int kFirstActivatedFd = 3;

struct ActivatedSockets {
  int count = 0;                   // fds kFirstActivatedFd .. kFirstActivatedFd + count - 1
  std::vector<std::string> names;  // LISTEN_FDNAMES, when set
};

// Reads LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES from `env`. None passed, or passed to another
// process (LISTEN_PID is not `self`: we inherited them), is a count of 0. Malformed values are
// an error: a unit that passes sockets we cannot read must not start a daemon that binds its own.
Result<ActivatedSockets> activated_sockets(const Environment& env, pid_t self);

// Removes LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES from the process environment, so that no
// child (a block, a health check) believes they are meant for it.
void forget_activation_environment();

}  // namespace stackie
