// host_ports.h's probes of the host, Windows: a test bind on 127.0.0.1 (exclusive, so a
// listener that allows address sharing still counts as a holder). Who holds a port is not
// looked up yet (GetExtendedTcpTable would say): "another process".
#include <winsock2.h>

#include "supervisor/host_ports.h"

namespace stackie {

bool host_port_free(int port) {
  static const bool started = [] {
    WSADATA data;
    return WSAStartup(MAKEWORD(2, 2), &data) == 0;
  }();
  if (!started) return false;
  SOCKET probe = ::socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  if (probe == INVALID_SOCKET) return false;
  BOOL one = TRUE;
  ::setsockopt(probe, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, reinterpret_cast<const char*>(&one),
               sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<u_short>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool free = ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::closesocket(probe);
  return free;
}

std::string port_holder(int) {
  return "";
}

}  // namespace stackie
