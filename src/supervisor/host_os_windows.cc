#include "supervisor/host_os.h"

#include <io.h>

#include "base/windows_text.h"

namespace stackie {

unsigned helper_process_flags() {
  // Not detached: in libuv's kill-on-close job, the helper dies with the daemon. A console of
  // its own with no window: the daemon usually has no console, and every exec health check
  // would otherwise open a window on the user's desktop.
  return UV_PROCESS_WINDOWS_HIDE_CONSOLE;
}

void signal_helper(int pid, int) {
  uv_kill(pid, SIGKILL);  // TerminateProcess: the monitor's job takes the command's tree
}

size_t read_pipe_now(const uv_pipe_t*, char*, size_t) {
  return 0;
}

size_t grow_pipe_to(const uv_pipe_t*, size_t) {
  return 0;
}

std::string trusted_runtime_dir() {
  return "";
}

long clock_ticks_per_second() {
  return 0;
}

Status lock_instance(int fd, const std::string& shown) {
  OVERLAPPED at{};  // the lock covers byte 0, which no one writes: the file is empty
  if (LockFileEx(reinterpret_cast<HANDLE>(::_get_osfhandle(fd)),
                 LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at))
    return {};
  if (GetLastError() == ERROR_LOCK_VIOLATION) return Error{UV_EBUSY, shown + " is locked"};
  return windows_error("lock " + shown);
}

}  // namespace stackie
