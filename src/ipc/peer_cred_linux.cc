// SO_PEERCRED: the credentials the peer had when it called connect() (or socketpair()),
// recorded by the kernel; see unix(7).
#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>

#include "ipc/peer_cred.h"

namespace stackie::ipc {

Result<PeerCredentials> peer_credentials(int socket_fd) {
  struct ucred credentials {};
  socklen_t length = sizeof credentials;
  if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0)
    return system_error(errno, "cannot read the peer's credentials (SO_PEERCRED)");
  static_assert(std::is_same_v<uid_t, std::uint32_t> && std::is_same_v<pid_t, std::int32_t>);
  PeerCredentials peer;
  peer.uid = credentials.uid;
  peer.gid = credentials.gid;
  peer.pid = credentials.pid;
  return peer;
}

namespace {

constexpr unsigned long kProcessExiting = 0x4;  // PF_EXITING in /proc/PID/stat's flags

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "SigPnd:\t0000000000000100": a pending-signal mask in hex, bit N-1 for signal N.
bool mask_has_sigkill(const std::string& status, const char* field) {
  const size_t at = status.find(field);
  if (at == std::string::npos) return false;
  const unsigned long long mask =
      std::strtoull(status.c_str() + at + std::strlen(field), nullptr, 16);
  return (mask >> (SIGKILL - 1)) & 1;
}

}  // namespace

bool peer_is_exiting(const PeerCredentials& peer) {
  if (peer.pid <= 0) return false;  // another pid namespace's process: not ours to judge
  const std::string proc = "/proc/" + std::to_string(peer.pid);
  if (kill(peer.pid, 0) != 0 && errno == ESRCH) return true;  // gone; someone kept its socket
  const std::string stat = read_text(proc + "/stat");
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return false;  // no /proc here: cannot tell
  // After "pid (comm)": state ppid pgrp session tty_nr tpgid flags ...
  char state = 0;
  unsigned long flags = 0;
  if (std::sscanf(stat.c_str() + name_end + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
    return false;
  if (state == 'Z' || state == 'X' || (flags & kProcessExiting)) return true;
  const std::string status = read_text(proc + "/status");
  return mask_has_sigkill(status, "ShdPnd:") || mask_has_sigkill(status, "SigPnd:");
}

}  // namespace stackie::ipc
