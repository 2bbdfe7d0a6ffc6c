#include "supervisor/service_manager.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "base/posix_io.h"

namespace stackie {

namespace {

// A decimal number without sign, spaces or overflow; -1 otherwise.
long parse_count(const std::string& text) {
  if (text.empty() || text.size() > 9) return -1;
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

Status send_service_notification(const std::string& address, const std::string& state) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address.size() < 2 || (address[0] != '/' && address[0] != '@'))
    return Error{-EINVAL, "NOTIFY_SOCKET is neither a path nor @abstract: '" + address + "'"};
  if (address.size() >= sizeof addr.sun_path)
    return Error{-ENAMETOOLONG, "NOTIFY_SOCKET is too long: " + address};
  std::memcpy(addr.sun_path, address.data(), address.size());
  // The abstract namespace: a leading NUL, and the length counts exactly the name's bytes.
  if (address[0] == '@') addr.sun_path[0] = '\0';
  int fd = socket_cloexec(AF_UNIX, SOCK_DGRAM);
  if (fd < 0) return system_error(errno, "socket for NOTIFY_SOCKET");
  ssize_t sent =
      sendto_nosignal(fd, state.data(), state.size(), reinterpret_cast<sockaddr*>(&addr),
                      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size()));
  int saved = errno;
  ::close(fd);
  if (sent < 0) return system_error(saved, "send to NOTIFY_SOCKET " + address);
  return {};
}

void notify_service_manager(const std::string& state) {
  const char* address = std::getenv("NOTIFY_SOCKET");
  if (address == nullptr || *address == '\0') return;
  (void)send_service_notification(address, state);
}

Result<ActivatedSockets> activated_sockets(const Environment& env, pid_t self) {
  ActivatedSockets out;
  auto pid = env.find("LISTEN_PID");
  auto fds = env.find("LISTEN_FDS");
  if (pid == env.end() || fds == env.end()) return out;
  long listen_pid = parse_count(pid->second);
  if (listen_pid <= 0) return Error{-EINVAL, "LISTEN_PID is not a pid: '" + pid->second + "'"};
  if (listen_pid != self) return out;
  long count = parse_count(fds->second);
  if (count < 0 || count > INT_MAX - kFirstActivatedFd)
    return Error{-EINVAL, "LISTEN_FDS is not a count: '" + fds->second + "'"};
  out.count = static_cast<int>(count);
  if (auto names = env.find("LISTEN_FDNAMES"); names != env.end()) {
    size_t start = 0;
    const std::string& value = names->second;
    while (start <= value.size()) {
      size_t end = value.find(':', start);
      if (end == std::string::npos) end = value.size();
      out.names.push_back(value.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

void forget_activation_environment() {
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
}

}  // namespace stackie
