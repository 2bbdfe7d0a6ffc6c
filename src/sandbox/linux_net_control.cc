#include "sandbox/linux_net_control.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sandbox/net_channel_protocol.h"

namespace stackie::linux_sandbox {
namespace {

// One message: a tag byte (plus text) and up to kMaxListeners fds.
bool send_message(int channel, const std::string& body, const std::vector<int>& fds) {
  iovec io{const_cast<char*>(body.data()), body.size()};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * net_channel::kMaxListeners)];
  if (!fds.empty()) {
    size_t bytes = sizeof(int) * fds.size();
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(bytes);
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(bytes);
    std::memcpy(CMSG_DATA(header), fds.data(), bytes);
  }
  ssize_t n;
  do n = sendmsg(channel, &message, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(body.size());
}

int tcp_socket() {
  return socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

// 127.0.0.1:port, listening; -errno on failure.
int listen_on(int port) {
  int fd = tcp_socket();
  if (fd < 0) return -errno;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd, SOMAXCONN) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

}  // namespace

std::optional<SetupError> send_inside_listeners(const NetControl& net) {
  if (net.fd < 0) return std::nullopt;
  if (net.listen_ports.size() > static_cast<size_t>(net_channel::kMaxListeners))
    return setup_error("listen", E2BIG, "more than 64 --listen ports");
  std::vector<int> fds;
  std::optional<SetupError> failure;
  for (int port : net.listen_ports) {
    int fd = listen_on(port);
    if (fd < 0) {
      failure = setup_error("listen", -fd,
                            "listen on 127.0.0.1:" + std::to_string(port) + " inside the sandbox");
      break;
    }
    fds.push_back(fd);
  }
  if (!failure && !send_message(net.fd, std::string(1, net_channel::kListeners), fds))
    failure = setup_error("listen", errno, "hand the listeners to the caller (net channel)");
  for (int fd : fds) close(fd);
  return failure;
}

bool serve_net_request(int fd) {
  char request[16];
  ssize_t n;
  do n = recv(fd, request, sizeof request, 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  if (n != 1 || request[0] != net_channel::kSocket)
    return send_message(fd, std::string(1, net_channel::kError) + std::to_string(EINVAL), {});
  int socket_fd = tcp_socket();
  if (socket_fd < 0)
    return send_message(fd, std::string(1, net_channel::kError) + std::to_string(errno), {});
  bool sent = send_message(fd, std::string(1, net_channel::kSocket), {socket_fd});
  close(socket_fd);
  return sent;
}

}  // namespace stackie::linux_sandbox
