// macOS: the socket launchd holds for the LaunchAgent's Sockets entry (launchd_activation.h).
// launch_activate_socket is in libSystem since macOS 10.10; <launch.h> is in the SDK and in
// zig's bundled macOS headers (the cross build). It returns the fds in an array from malloc.
#include <fcntl.h>
#include <launch.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

#include "supervisor/launchd_activation.h"

namespace stackie {

Result<int> take_launchd_socket() {
  int* fds = nullptr;
  size_t count = 0;
  int error = ::launch_activate_socket(kLaunchdSocketName, &fds, &count);
  std::vector<int> passed;
  if (error == 0 && fds != nullptr) passed.assign(fds, fds + count);
  ::free(fds);
  auto outcome = launchd_activation_outcome(error, passed);
  for (int fd : passed)
    if (!outcome.ok() || fd != *outcome) ::close(fd);
  if (outcome.ok() && *outcome >= 0) ::fcntl(*outcome, F_SETFD, FD_CLOEXEC);
  return outcome;
}

}  // namespace stackie
