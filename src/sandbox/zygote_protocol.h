// The lockbox's clone point (issue 25): `stackie-lockbox --zygote` runs once per daemon and
// forks a monitor for each block, where the daemon would otherwise exec a new lockbox. The
// monitor is the same code after the fork as after an exec (lockbox_main.cc), without the
// exec's cost: on this project's VMs a glibc program's start alone, its x86 cache-info CPUID
// loop, takes about a millisecond. Shared by the zygote (linux_zygote.cc) and the daemon's
// client (spawn/zygote_client.cc); Linux only.
//
// One SOCK_SEQPACKET socket, fd 3 of the zygote. Each datagram is one message:
// - daemon -> zygote, a spawn: ZygoteRequest, then `argc` NUL-terminated strings (the argv an
//   exec'd lockbox would get), with `fd_count` descriptors in SCM_RIGHTS that become the
//   monitor's fds 0, 1, 2, 3, ... in that order; `ahead` says which namespaces a spare may have
//   made for it (below);
// - zygote -> daemon, the answer to each spawn, in order: ZygoteReply kind `spawned` (pid, with
//   the monitor's pidfd in SCM_RIGHTS, so the daemon signals this process and no other even
//   once its pid is reused) or `failed` (errno);
// - zygote -> daemon, whenever a monitor ends: kind `exited` (pid, the wait status). The zygote
//   reaps its monitors itself, so this is the only way the daemon learns the status.
// The zygote exits when the daemon closes its end, and dies with the daemon (PDEATHSIG); every
// monitor dies with the zygote (the monitor's own PDEATHSIG), and every block with its monitor.
// The zygote forks each monitor before its request comes (a spare, waiting on a socketpair of
// its own), so the answer to a spawn waits for no fork (the next spare comes once a monitor
// exits or the zygote is idle: linux_zygote.cc kSpareDelayMs; a request that finds none has its
// monitor forked on the spot). A spare makes, while it waits, the namespaces the last request
// asked for (`ahead`), and takes only a request that asks for the same: another is forked on the
// spot. A spare the daemon never heard of may be reported `exited` (it died, or the zygote
// dropped it): the daemon ignores unknown pids.
//
// A namespace monitor tells the zygote its exit code once its sandbox is gone (pid 1 reaped,
// which took every process of the pid namespace with it), by a queued signal (gone_signal(),
// gone_value()) just before it exits, having closed the block's stdio, and the zygote says
// `exited` at once: the monitor's own exit (its address space and the sandbox's mount
// namespace torn down) took about half a millisecond here, on the path of every block's stop
// and restart (issue 25). The monitor's reaping is then not reported again. The zygote takes
// that word only for a request with kAheadNamespaces (the daemon sets it for the namespace
// lockbox without a cgroup, and only then does the monitor send it). A monitor that ends
// otherwise (killed, another backend) is reported when reaped, as before.
#pragma once

#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace stackie::zygote {

// "ZYG2": the second form of ZygoteRequest (with `ahead`); a request of the first is refused.
inline constexpr uint32_t kMagic = 0x5a594732;
inline constexpr int kSocketFd = 3;
inline constexpr uint32_t kMaxArgs = 4096;
inline constexpr uint32_t kMaxFds = 16;
inline constexpr size_t kMaxRequest = 64 * 1024;

// What a spare may make before its request comes, while the zygote is idle (linux_zygote.cc):
// the sandbox's namespaces as the monitor would make them (linux_namespaces.h
// make_namespaces_ahead), for a request of this kind. 0: nothing ahead (the landlock backend;
// a block with a cgroup, which it joins before its namespaces exist).
inline constexpr uint32_t kAheadNamespaces = 1u << 0;
inline constexpr uint32_t kAheadOwnNetwork = 1u << 1;  // not `network: host`
inline constexpr uint32_t kAheadRootInside = 1u << 2;  // `identity: root`: uid 0 inside
inline constexpr uint32_t kAheadKnown = kAheadNamespaces | kAheadOwnNetwork | kAheadRootInside;

inline uint32_t namespaces_ahead(bool own_network, bool root_inside) {
  return kAheadNamespaces | (own_network ? kAheadOwnNetwork : 0) |
         (root_inside ? kAheadRootInside : 0);
}

// The monitor's "my sandbox is gone": a realtime signal, so that reports of monitors ending
// together are queued rather than merged, with the exit code and the monitor's generation (the
// zygote's count of the monitors it forked, 23 bits) as its value. The generation keeps a report
// that comes after its monitor was reaped from naming another monitor given the same pid.
// Linux only, as the zygote is (macOS, which also compiles this header, has no realtime
// signals).
#if defined(__linux__)
inline int gone_signal() {
  return SIGRTMIN;
}
#endif
inline constexpr uint32_t kGenerationMask = (1u << 23) - 1;
inline int gone_value(uint32_t generation, int exit_code) {
  return static_cast<int>(((generation & kGenerationMask) << 8) | (exit_code & 0xff));
}
inline uint32_t generation_of(int value) {
  return (static_cast<uint32_t>(value) >> 8) & kGenerationMask;
}
inline int exit_code_of(int value) {
  return value & 0xff;
}

struct ZygoteRequest {
  uint32_t magic = kMagic;
  uint32_t argc = 0;
  uint32_t fd_count = 0;
  uint32_t ahead = 0;  // kAhead* bits: the kind of sandbox this request's policy asks for
};

enum class ReplyKind : uint32_t { spawned = 1, failed = 2, exited = 3 };

struct ZygoteReply {
  ReplyKind kind = ReplyKind::failed;
  int32_t pid = 0;
  int32_t value = 0;  // failed: errno; exited: the wait status
};

// Appends the fds a received message carried in SCM_RIGHTS to `fds`.
inline void take_passed_fds(msghdr& message, std::vector<int>& fds) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
}

// Sends one datagram of `size` bytes with `fds` (at most kMaxFds) in SCM_RIGHTS, no control
// message when there are none, retrying on EINTR; sendmsg's result, errno set on -1. Both sides
// of the socket speak through it.
inline ssize_t send_datagram(int sock, const void* data, size_t size, const int* fds,
                             size_t fd_count) {
  iovec io{const_cast<void*>(data), size};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  if (fd_count > kMaxFds) {
    errno = EINVAL;
    return -1;
  }
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (fd_count > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fd_count);
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fd_count);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * fd_count);
  }
  ssize_t sent;
  do sent = sendmsg(sock, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent;
}

}  // namespace stackie::zygote
