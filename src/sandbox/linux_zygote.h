// The zygote side of the lockbox's clone point (zygote_protocol.h): `stackie-lockbox --zygote`.
#pragma once

namespace stackie::linux_sandbox {

// What a forked monitor runs: the lockbox's main, given the argv an exec would have given it.
using LockboxMain = int (*)(int argc, char** argv);

// Serves spawn requests on `socket_fd` until the daemon closes it (returns 0) or dies (the
// zygote is killed with it). Each request is taken by a process forked ahead of it (or forked
// then), which takes the request's fds as its 0, 1, 2, ... and exits with run(argc, argv).
int serve_zygote(int socket_fd, LockboxMain run);

// In a monitor the zygote forked, once nothing of its sandbox runs any more (pid 1 reaped):
// tells the zygote the code it is about to exit with, so that the daemon hears of the block's
// end before this process's own exit is done (zygote_protocol.h). Does nothing elsewhere.
void report_sandbox_gone(int exit_code);

}  // namespace stackie::linux_sandbox
