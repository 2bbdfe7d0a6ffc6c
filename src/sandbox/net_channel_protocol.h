// The net channel between the daemon and a block's lockbox monitor (DESIGN.md §6). The monitor
// lives in the block's network namespace, so the sockets it makes belong there wherever their
// fds travel: the daemon asks it for sockets and does all the copying on its own loop.
//
// Transport: one AF_UNIX SOCK_SEQPACKET pair (message boundaries kept), fds as SCM_RIGHTS.
//   monitor -> daemon, once, before the block starts:
//       'L' + N listening sockets, bound to 127.0.0.1:PORT in the order of `--listen PORT`
//   daemon -> monitor:  'S'           ask for a fresh TCP socket (non-blocking, unconnected)
//   monitor -> daemon:  'S' + 1 fd    the socket, in request order
//                       'E' + errno   (decimal text) when it could not be made
// Nothing else is accepted: an unknown request gets 'E' EINVAL.
#pragma once

namespace stackie::net_channel {

inline constexpr char kListeners = 'L';
inline constexpr char kSocket = 'S';
inline constexpr char kError = 'E';
// SCM_RIGHTS carries at most SCM_MAX_FD (253) fds in one message; far more than a block needs.
inline constexpr int kMaxListeners = 64;

}  // namespace stackie::net_channel
