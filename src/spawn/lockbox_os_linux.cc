#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "spawn/lockbox_os.h"

namespace stackie::spawn_detail {

SandboxKind lockbox_kind(bool landlock) {
  return landlock ? SandboxKind::linux_landlock : SandboxKind::linux_namespaces;
}

std::vector<std::string> backend_args(const std::string& lockbox, bool landlock) {
  return {lockbox, "--backend", landlock ? "landlock" : "namespaces"};
}

bool lockbox_has_zygote() {
  return true;
}

bool lockbox_uses_lifeline() {
  return false;
}

std::string limits_without_cgroup(const std::string& reason) {
  return "rlimits (no delegated cgroup: " + reason + ")";
}

Result<std::pair<int, int>> cloexec_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return system_error(errno, "pipe");
  return std::pair<int, int>(fds[0], fds[1]);
}

// A pipe, grown when the policy is bigger than its default 64 KiB.
Result<std::pair<int, int>> policy_channel(size_t size) {
  STACKIE_TRY_ASSIGN(fds, cloexec_pipe());
  if (size > 65536 && ::fcntl(fds.second, F_SETPIPE_SZ, static_cast<int>(size)) < 0) {
    int errnum = errno;
    ::close(fds.first);
    ::close(fds.second);
    return system_error(errnum, "policy of " + std::to_string(size) + " bytes");
  }
  return fds;
}

// Both ends close-on-exec; uv_spawn dups ours into the child's fd 5 without the flag.
Result<std::pair<int, int>> net_channel_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    return system_error(errno, "net channel");
  return std::pair<int, int>(fds[0], fds[1]);
}

std::string running_executable() {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
}

}  // namespace stackie::spawn_detail
