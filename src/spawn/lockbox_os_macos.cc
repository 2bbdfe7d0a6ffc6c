#include <fcntl.h>
#include <mach-o/dyld.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "spawn/lockbox_os.h"

namespace stackie::spawn_detail {

namespace {

// macOS has no pipe2 or SOCK_CLOEXEC. The daemon is single-threaded when it spawns (the libuv
// loop), so no other thread can fork between the call and the flag.
Status set_cloexec(int fd) {
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return system_error(errno, "FD_CLOEXEC");
  return {};
}

Result<std::pair<int, int>> cloexec_pair(int fds[2]) {
  for (int i = 0; i < 2; ++i)
    if (auto set = set_cloexec(fds[i]); !set.ok()) {
      ::close(fds[0]);
      ::close(fds[1]);
      return set.error();
    }
  return std::pair<int, int>(fds[0], fds[1]);
}

}  // namespace

SandboxKind lockbox_kind(bool) {
  return SandboxKind::seatbelt;
}

std::vector<std::string> backend_args(const std::string& lockbox, bool) {
  return {lockbox};
}

bool lockbox_has_zygote() {
  return false;
}

bool lockbox_uses_lifeline() {
  return true;
}

std::string limits_without_cgroup(const std::string&) {
  return "none (limits are enforced on Linux only)";
}

Result<std::pair<int, int>> cloexec_pipe() {
  int fds[2];
  if (::pipe(fds) != 0) return system_error(errno, "pipe");
  return cloexec_pair(fds);
}

// A pipe cannot be grown on macOS (no F_SETPIPE_SZ); a stream socket's send buffer can.
Result<std::pair<int, int>> policy_channel(size_t size) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return system_error(errno, "policy channel");
  STACKIE_TRY_ASSIGN(pair, cloexec_pair(fds));
  int bytes = static_cast<int>(size + 4096);
  if (size > 8192 && ::setsockopt(pair.second, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0) {
    int errnum = errno;
    ::close(pair.first);
    ::close(pair.second);
    return system_error(errnum, "policy of " + std::to_string(size) + " bytes");
  }
  return pair;
}

Result<std::pair<int, int>> net_channel_pair() {
  return Error{UV_ENOTSUP, "no network namespace on macOS: the profile confines the loopback"};
}

std::string running_executable() {
  char self[PATH_MAX];
  uint32_t size = sizeof self;
  if (_NSGetExecutablePath(self, &size) != 0) return {};
  char real[PATH_MAX];
  return ::realpath(self, real) ? std::string(real) : std::string(self);
}

}  // namespace stackie::spawn_detail
