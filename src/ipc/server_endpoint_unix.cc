// The server's endpoint on POSIX: a Unix socket file (socket_file.h: the private directory, the
// lock that keeps two daemons apart, the stale socket of a killed daemon, the 0600 bind) and the
// peer's uid from the kernel (peer_cred_*.cc).
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "base/uv_handle.h"
#include "ipc/server_endpoint.h"
#include "ipc/socket_file.h"

namespace stackie::ipc {

namespace {

constexpr int kBacklog = 128;

class SocketFile : public Endpoint {
 public:
  SocketFile(std::string path, dev_t device, ino_t inode, int lock_fd)
      : path_(std::move(path)), device_(device), inode_(inode), lock_fd_(lock_fd) {}
  ~SocketFile() override { release(); }

  void release() override {
    watcher_.close();
    // Only our own socket: a daemon started after us may have replaced the file.
    struct stat info {};
    if (!path_.empty() && lstat(path_.c_str(), &info) == 0 && info.st_dev == device_ &&
        info.st_ino == inode_)
      unlink(path_.c_str());
    path_.clear();
    if (lock_fd_ >= 0) {
      // The lock file stays: unlinking it would let two later daemons lock two different files.
      ::close(lock_fd_);
      lock_fd_ = -1;
    }
  }

  // The directory is watched (inotify through libuv: no timer, no polling); any change in it
  // checks that the socket file is still ours.
  void watch(uv_loop_t* loop, std::function<void()> gone, const LogHook& log) override {
    watcher_.close();
    gone_ = std::move(gone);
    const std::size_t slash = path_.find_last_of('/');
    const std::string dir = slash == 0 ? "/" : path_.substr(0, slash);
    int status =
        watcher_.init([&](uv_fs_event_t* event) { return uv_fs_event_init(loop, event); }, this);
    if (status == 0)
      status = uv_fs_event_start(
          watcher_.get(),
          [](uv_fs_event_t* event, const char*, int, int) {
            if (auto* self = static_cast<SocketFile*>(event->data)) self->check();
          },
          dir.c_str(), 0);
    if (status < 0 && log)
      log(LogLevel::warning, "ipc: cannot watch " + dir + " (" + uv_strerror(status) +
                                 "): a deleted socket will not be noticed");
  }

 private:
  void check() {
    struct stat info {};
    if (path_.empty() ||
        (lstat(path_.c_str(), &info) == 0 && info.st_dev == device_ && info.st_ino == inode_))
      return;
    watcher_.close();
    // A copy: the call may destroy this endpoint, and with it gone_.
    if (auto gone = std::move(gone_)) gone();
  }

  std::string path_;
  dev_t device_;
  ino_t inode_;
  int lock_fd_;
  UvHandle<uv_fs_event_t> watcher_;
  std::function<void()> gone_;
};

Status serve_fd(uv_pipe_t* listener, int fd, uv_connection_cb on_connection) {
  if (const int status = uv_pipe_open(listener, fd); status < 0)
    return Error{status, std::string("cannot serve the socket: ") + uv_strerror(status)};
  if (const int status =
          uv_listen(reinterpret_cast<uv_stream_t*>(listener), kBacklog, on_connection);
      status < 0)
    return Error{status, std::string("cannot listen: ") + uv_strerror(status)};
  return {};
}

}  // namespace

Result<std::unique_ptr<Endpoint>> listen_endpoint(uv_pipe_t* listener, const std::string& path,
                                                  uv_connection_cb on_connection,
                                                  const LogHook& log) {
  STACKIE_TRY(check_socket_path(path));
  const std::size_t slash = path.find_last_of('/');
  STACKIE_TRY(ensure_private_directory(slash == 0 ? "/" : path.substr(0, slash)));
  STACKIE_TRY_ASSIGN(lock_fd, lock_socket_path(path));
  auto fail = [&](Error error) -> Result<std::unique_ptr<Endpoint>> {
    ::close(lock_fd);
    return error;
  };
  auto stale = remove_stale_socket(path);
  if (!stale) return fail(stale.take_error());
  if (*stale && log)
    log(LogLevel::info, "ipc: replaced the stale socket " + path + " (its daemon is gone)");
  auto fd = bind_listening_socket(path, kBacklog);
  if (!fd) return fail(fd.take_error());
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    const int error = errno;
    ::close(*fd);
    return fail(system_error(error, "cannot inspect " + path));
  }
  if (auto served = serve_fd(listener, *fd, on_connection); !served) {
    unlink(path.c_str());
    return fail(served.take_error());
  }
  return std::unique_ptr<Endpoint>(new SocketFile(path, info.st_dev, info.st_ino, lock_fd));
}

Status adopt_listening_fd(uv_pipe_t* listener, int fd, uv_connection_cb on_connection) {
  STACKIE_TRY(check_listening_unix_socket(fd));
  return serve_fd(listener, fd, on_connection);
}

Result<PeerCredentials> accepted_peer(uv_pipe_t* connection) {
  uv_os_fd_t fd = -1;
  uv_fileno(reinterpret_cast<uv_handle_t*>(connection), &fd);
  return peer_credentials(fd);
}

std::string refusal_for(const PeerCredentials& peer, const ServerOptions& options) {
  const uid_t allowed = options.allowed_uid.value_or(geteuid());
  if (peer.uid == allowed) return "";
  return "this daemon serves uid " + std::to_string(allowed) + " only";
}

std::string first_read_refusal(uv_pipe_t*) {
  return "";
}

std::string describe(const PeerCredentials& peer) {
  std::string text = "uid " + std::to_string(peer.uid);
  if (peer.pid > 0) text += ", pid " + std::to_string(peer.pid);
  return text;
}

bool peer_hung_up(uv_pipe_t* connection) {
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(connection), &fd) != 0) return true;
  pollfd entry{fd, 0, 0};  // POLLHUP is reported whatever the events asked
  return poll(&entry, 1, 0) < 0 || (entry.revents & (POLLHUP | POLLERR)) != 0;
}

}  // namespace stackie::ipc
