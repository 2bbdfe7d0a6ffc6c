#include "spawn/net_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "base/posix_io.h"
#include "sandbox/net_channel_protocol.h"

namespace stackie::spawn_detail {

Result<NetChannel*> NetChannel::open(uv_loop_t* loop, int fd, Listeners on_listeners) {
  auto* self = new NetChannel();
  self->fd_ = fd;
  self->on_listeners_ = std::move(on_listeners);
  if (int rc =
          self->poll_.init([&](uv_poll_t* poll) { return uv_poll_init(loop, poll, fd); }, self);
      rc != 0) {
    ::close(fd);
    delete self;
    return Error{rc, std::string("net channel: ") + uv_strerror(rc)};
  }
  uv_poll_start(self->poll_.get(), UV_READABLE, [](uv_poll_t* handle, int, int) {
    static_cast<NetChannel*>(handle->data)->on_readable();
  });
  return self;
}

void NetChannel::request_socket(SocketDone done) {
  if (broken_ || closed_) {
    done(Error{UV_ECONNREFUSED, "the sandbox's network namespace is gone"});
    return;
  }
  requests_.push_back(std::move(done));
  send_waiting();
}

void NetChannel::send_waiting() {
  while (!broken_ && head_ + sent_ < requests_.size() && sent_ < kInFlight) {
    char request = net_channel::kSocket;
    ssize_t n = send_nosignal(fd_, &request, 1, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // a reply frees room
    if (n != 1) {
      fail_all(UV_ECONNREFUSED);
      return;
    }
    ++sent_;
  }
}

void NetChannel::on_readable() {
  bool more = true;
  while (more && !broken_ && !closed_) receive_one(&more);
  if (!closed_) send_waiting();
}

void NetChannel::receive_one(bool* more) {
  char body[32];
  iovec io{body, sizeof body};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * net_channel::kMaxListeners)];
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n = recvmsg_cloexec(fd_, &message, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    *more = errno == EINTR;
    return;
  }
  std::vector<int> fds;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const auto* data = reinterpret_cast<const int*>(CMSG_DATA(header));
    fds.insert(fds.end(), data, data + count);
  }
  if (n <= 0 || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
    for (int fd : fds) ::close(fd);
    fail_all(UV_ECONNREFUSED);  // the monitor is gone (or spoke nonsense)
    return;
  }
  char tag = body[0];
  if (tag == net_channel::kListeners) {
    if (on_listeners_) {
      auto deliver_listeners = std::move(on_listeners_);
      on_listeners_ = nullptr;
      deliver_listeners(std::move(fds));
    } else {
      for (int fd : fds) ::close(fd);
    }
    return;
  }
  if (tag == net_channel::kSocket && fds.size() == 1) return deliver(fds[0]);
  for (int fd : fds) ::close(fd);
  int err =
      tag == net_channel::kError ? std::atoi(std::string(body + 1, size_t(n - 1)).c_str()) : EPROTO;
  deliver(Error{-(err > 0 ? err : EPROTO), std::string("socket inside the sandbox: ") +
                                               std::strerror(err > 0 ? err : EPROTO)});
}

void NetChannel::deliver(Result<int> socket) {
  if (sent_ == 0) {  // a reply nobody asked for
    if (socket.ok()) ::close(*socket);
    return;
  }
  SocketDone done = std::move(requests_[head_]);
  ++head_;
  --sent_;
  drop_answered();
  done(std::move(socket));  // may ask for another socket
}

void NetChannel::drop_answered() {
  constexpr size_t kKeptRequests = 64;
  if (head_ == requests_.size()) {
    if (requests_.capacity() > kKeptRequests) std::vector<SocketDone>().swap(requests_);
    requests_.clear();
    head_ = 0;
  } else if (head_ >= kKeptRequests && head_ * 2 >= requests_.size()) {
    requests_.erase(requests_.begin(), requests_.begin() + static_cast<ptrdiff_t>(head_));
    head_ = 0;
  }
}

void NetChannel::fail_all(int status) {
  broken_ = true;
  if (poll_) uv_poll_stop(poll_.get());
  std::vector<SocketDone> failed(std::make_move_iterator(requests_.begin() + ptrdiff_t(head_)),
                                 std::make_move_iterator(requests_.end()));
  std::vector<SocketDone>().swap(requests_);
  head_ = sent_ = 0;
  for (auto& done : failed)
    done(Error{status, status == UV_ECANCELED ? "cancelled: the block is going away"
                                              : "the sandbox's network namespace is gone"});
}

void NetChannel::close() {
  if (closed_) return;
  fail_all(UV_ECANCELED);
  closed_ = true;
  on_listeners_ = nullptr;
  // The fd is closed only once libuv no longer polls it, then the channel frees itself.
  poll_.close([this] {
    ::close(fd_);
    delete this;
  });
}

}  // namespace stackie::spawn_detail
