#include "supervisor/host_os.h"

namespace stackie {

unsigned helper_process_flags() {
  return 0;  // in libuv's kill-on-close job: the helper dies with the daemon
}

void signal_helper(int pid, int) {
  uv_kill(pid, SIGKILL);  // TerminateProcess: the monitor's job takes the command's tree
}

size_t read_pipe_now(const uv_pipe_t*, char*, size_t) {
  return 0;
}

std::string trusted_runtime_dir() {
  return "";
}

long clock_ticks_per_second() {
  return 0;
}

}  // namespace stackie
