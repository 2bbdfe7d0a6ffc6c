// pid 1 forked ahead (issue 25): a zygote's spare that made a pid namespace ahead
// (linux_namespaces.h, make_namespaces_ahead) also forks that namespace's pid 1 while it waits,
// so that a spawn no longer pays for pid 1's fork, its first touches of a copied address space
// and its prologue (about 1 ms of a spawn on this project's VMs: bench/RESULTS.md). pid 1 then
// waits on a socket for its LaunchRequest, which the monitor hands over where it used to fork.
//
// The hand-over is the request's own parts, nothing of the monitor's memory: the command, the
// policy as JSON (the form the daemon sends it in), the error fd's number, and the fds the block
// is given (0, 1, 2, --pass-fd) with the numbers they have in the monitor, placed at the same
// numbers in pid 1. pid 1 stays a fork, not a CLONE_VM child (linux_launch.cc says why).
#pragma once

#include <sys/types.h>

#include <optional>

#include "sandbox/linux_launch.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// pid 1 forked ahead in this process, and the monitor's end of its socket (which is also
// pid 1's lifeline: pid 1 sees its end of file when the monitor is gone). pid -1: none.
struct InitAhead {
  pid_t pid = -1;
  int sock = -1;
};
InitAhead& init_ahead();

// The monitor: sends `request` to pid 1 forked ahead. An error when pid 1 is gone (nothing can
// replace it: the kernel allows no second init in its namespace) or the request cannot be sent.
std::optional<SetupError> hand_over(const InitAhead& init, const LaunchRequest& request);

// pid 1: waits for the request on `sock` and places its fds at their numbers (moving `*sock`
// out of their way first). nullopt when the monitor closed the socket without a request (it
// failed before, or is gone) or sent one that does not parse.
std::optional<LaunchRequest> receive_hand_over(int* sock);

}  // namespace stackie::linux_sandbox
