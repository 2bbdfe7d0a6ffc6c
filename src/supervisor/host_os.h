// The small OS seams of the supervisor, one file per platform (host_os_posix.cc,
// host_os_windows.cc): how a helper command (an exec health check, `stackie exec`) is spawned
// and killed as a whole, reading what a pipe holds at once, the trusted runtime directory and
// the daemon's single-instance lock.
#pragma once

#include <uv.h>

#include <cstddef>
#include <string>

#include "base/error.h"

namespace stackie {

// uv_process_options_t flags for a helper command. POSIX: UV_PROCESS_DETACHED, its own process
// group, killed as one. Windows: not detached, so the helper stays in libuv's kill-on-close job
// and dies with the daemon (a detached process would leave it); its tree is its monitor's job.
// Its console has no window.
unsigned helper_process_flags();

// Sends `signum` to the helper started with helper_process_flags() and everything it started.
// POSIX: kill(-pid). Windows: terminates it (there are no signals); the helper is a lockbox
// monitor, whose job then kills the command's tree.
void signal_helper(int pid, int signum);

// Reads what `pipe` holds now, without waiting: the bytes read, or 0 when nothing is there (or
// at its end). POSIX: a non-blocking read(2) on its fd. Windows: always 0, since a second read
// would race libuv's own overlapped read; the pipe is read to its end through libuv instead.
size_t read_pipe_now(const uv_pipe_t* pipe, char* buffer, size_t size);

// Asks for `pipe` to hold `bytes` (Linux F_SETPIPE_SZ): its capacity after the call, or 0 where
// pipes cannot grow (macOS, Windows) or the kernel refused (the user's pipe pages are used up).
size_t grow_pipe_to(const uv_pipe_t* pipe, size_t bytes);

// $XDG_RUNTIME_DIR when it is the session's private directory (absolute, a directory, ours,
// mode 0700), else "". Windows: always "" (no such directory; ephemeral storage goes under the
// storage root).
std::string trusted_runtime_dir();

// Takes the daemon's single-instance lock on the open file `fd` (`shown` names it), without
// waiting; the system drops it when the file is closed or the process dies, however it dies.
// UV_EBUSY when another process holds it. POSIX: flock(2). Windows: LockFileEx on its handle.
Status lock_instance(int fd, const std::string& shown);

// Clock ticks per second of /proc's CPU times (sysconf(_SC_CLK_TCK)); Windows: 0, it has no
// /proc and its blocks have no per-process CPU sample yet.
long clock_ticks_per_second();

}  // namespace stackie
