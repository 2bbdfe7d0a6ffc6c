#include "spawn/zygote_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "base/posix_io.h"
#include "sandbox/zygote_protocol.h"

namespace stackie::spawn_detail {

using zygote::ReplyKind;
using zygote::ZygoteReply;
using zygote::ZygoteRequest;

namespace {

// How long a spawn waits for the zygote's answer (a fork and a pidfd_open) before it gives the
// zygote up: then the spawner execs lockboxes again.
constexpr int kReplyTimeoutMs = 5000;

int pidfd_signal(int pidfd, int signum) {
  if (syscall(SYS_pidfd_send_signal, pidfd, signum, nullptr, 0) == 0) return 0;
  return errno == ESRCH ? 0 : -errno;
}

struct Message {
  ZygoteReply reply;
  int fd = -1;  // a `spawned` reply's pidfd
};

// One datagram, without waiting: 1 read, 0 nothing there, -1 end of file or a broken socket.
int read_message(int sock, Message* out) {
  iovec io{&out->reply, sizeof out->reply};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(sock, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  if (n <= 0) return -1;
  out->fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&out->fd, CMSG_DATA(c), sizeof(int));
  if (static_cast<size_t>(n) != sizeof out->reply) {
    if (out->fd >= 0) close(out->fd);
    return -1;  // not the zygote's protocol: treat the zygote as broken
  }
  return 1;
}

}  // namespace

// One monitor the zygote forked. Owns itself once its facade is gone, until its exit arrives.
class ZygoteChild final : public ChildProcess {
 public:
  ZygoteChild(uv_loop_t* loop, int pid, int pidfd, OnExit on_exit)
      : loop_(loop), pid_(pid), pidfd_(pidfd), on_exit_(std::move(on_exit)) {}
  ~ZygoteChild() {
    if (pidfd_ >= 0) close(pidfd_);
  }
  int pid() const override { return pid_; }
  bool running() const override { return running_; }
  int send_signal(int signum) override { return running_ ? pidfd_signal(pidfd_, signum) : 0; }
  void orphan(const std::function<void()>& kill_all) override {
    orphaned_ = true;
    on_exit_ = nullptr;
    if (running_) {
      kill_all();  // the exit, when it comes, frees us
      return;
    }
    delete this;  // an exit not yet delivered goes with us (its idle handle is closed)
  }
  // The zygote reaped it (or is gone, and the monitor died with it). The callback runs from
  // the loop, on its own turn, never from here: this may be called inside Zygote::spawn (an
  // exit read while waiting for a spawn's answer), and the callback may well spawn again
  // (a restart), or let the spawner drop the zygote.
  void exited(int64_t status, int term_signal) {
    running_ = false;
    if (orphaned_) {
      delete this;
      return;
    }
    status_ = status;
    term_signal_ = term_signal;
    const int ready =
        deliver_.init([this](uv_idle_t* idle) { return uv_idle_init(loop_, idle); }, this);
    if (ready != 0) {
      deliver();  // no handle to be had: better now than never
      return;
    }
    uv_idle_start(deliver_.get(), [](uv_idle_t* idle) {
      auto* self = static_cast<ZygoteChild*>(idle->data);
      self->deliver_.close();
      self->deliver();
    });
  }
  // The spawner is going away: no callback any more; freed now or when its facade lets go.
  void abandon() {
    running_ = false;
    on_exit_ = nullptr;
    deliver_.close();
    if (orphaned_) delete this;
  }

 private:
  void deliver() {
    if (!on_exit_) return;
    auto callback = on_exit_;
    callback(status_, term_signal_);  // may orphan (and free) us
  }

  uv_loop_t* loop_;
  int pid_;
  int pidfd_;
  bool running_ = true;
  bool orphaned_ = false;
  int64_t status_ = 0;
  int term_signal_ = 0;
  UvHandle<uv_idle_t> deliver_;
  OnExit on_exit_;
};

Result<std::unique_ptr<Zygote>> Zygote::start(uv_loop_t* loop, const std::string& lockbox) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return system_error(errno, "zygote socket");
  std::unique_ptr<Zygote> self(new Zygote(loop));
  std::string program = lockbox, flag = "--zygote";
  char* args[] = {program.data(), flag.data(), nullptr};
  char* env[] = {nullptr};  // as an exec'd lockbox: the block's environment is in its policy
  // No stdio of the daemon's: its stderr may still be the pipe `stackie up` reads until the
  // daemon is ready (a stack restored at start spawns before that), and a zygote holding it
  // would keep `up` waiting. A monitor has the block's pipes as its own stdio.
  uv_stdio_container_t stdio[4] = {};
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_IGNORE;
  stdio[2].flags = UV_IGNORE;
  stdio[3].flags = UV_INHERIT_FD;
  stdio[3].data.fd = pair[1];
  static_assert(zygote::kSocketFd == 3, "the socket is the zygote's first extra fd");
  uv_process_options_t options{};
  options.file = args[0];
  options.args = args;
  options.env = env;
  options.stdio = stdio;
  options.stdio_count = 4;
  options.exit_cb = &Zygote::on_process_exit;
  auto* process = new uv_process_t{};
  process->data = self.get();
  const int spawned = uv_spawn(loop, process, &options);
  close(pair[1]);
  if (spawned != 0) {
    close(pair[0]);
    uv_close(reinterpret_cast<uv_handle_t*>(process),
             [](uv_handle_t* closed) { delete reinterpret_cast<uv_process_t*>(closed); });
    return Error{spawned, "cannot start the lockbox zygote: " + std::string(uv_strerror(spawned))};
  }
  self->process_ = process;
  self->zygote_pid_ = process->pid;
  self->socket_ = pair[0];
  const int polled = self->poll_.init(
      [&](uv_poll_t* handle) { return uv_poll_init(loop, handle, self->socket_); }, self.get());
  if (polled != 0) return Error{polled, "zygote socket: " + std::string(uv_strerror(polled))};
  uv_poll_start(self->poll_.get(), UV_READABLE, [](uv_poll_t* handle, int, int) {
    if (auto* zygote = static_cast<Zygote*>(handle->data)) zygote->on_readable();
  });
  return self;
}

void Zygote::on_process_exit(uv_process_t* handle, int64_t, int) {
  auto* zygote = static_cast<Zygote*>(handle->data);
  if (zygote == nullptr) {  // its Zygote is gone: only the handle is left to close
    uv_close(reinterpret_cast<uv_handle_t*>(handle),
             [](uv_handle_t* closed) { delete reinterpret_cast<uv_process_t*>(closed); });
    return;
  }
  zygote->process_exited_ = true;
  zygote->on_gone();
  // Closed now that it is reaped: the daemon's loop must close with nothing left open, and a
  // retired zygote's Zygote may live on until the next spawn.
  zygote->process_ = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle),
           [](uv_handle_t* closed) { delete reinterpret_cast<uv_process_t*>(closed); });
}

Zygote::~Zygote() {
  poll_.close();
  if (socket_ >= 0) close(socket_);  // the zygote's end of file: it exits, and its monitors
  socket_ = -1;
  // Still running (it exits on the end of file above): on_process_exit closes the handle once
  // the zygote is reaped.
  if (process_ != nullptr) process_->data = nullptr;
  // Whatever still runs dies with the zygote; nothing reports back from a destroyed spawner.
  for (auto& [pid, child] : children_) child->abandon();
  children_.clear();
}

Result<ChildProcess*> Zygote::spawn(const std::vector<std::string>& argv,
                                    const std::vector<int>& fds, uint32_t ahead,
                                    ChildProcess::OnExit on_exit) {
  if (!alive_) return Error{UV_ESRCH, "the lockbox zygote is gone"};
  spawning_ = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{spawning_};
  if (argv.empty() || fds.size() < 3 || fds.size() > zygote::kMaxFds)
    return Error{UV_EINVAL, "zygote: bad spawn request"};
  std::string payload(sizeof(ZygoteRequest), '\0');
  ZygoteRequest header;
  header.argc = static_cast<uint32_t>(argv.size());
  header.fd_count = static_cast<uint32_t>(fds.size());
  header.ahead = ahead;
  std::memcpy(payload.data(), &header, sizeof header);
  for (const std::string& arg : argv) payload.append(arg.c_str(), arg.size() + 1);
  if (payload.size() > zygote::kMaxRequest)
    return Error{UV_E2BIG, "zygote: the command line is too long for one request"};

  const ssize_t sent =
      zygote::send_datagram(socket_, payload.data(), payload.size(), fds.data(), fds.size());
  if (sent < 0) {
    const int error = errno;
    on_gone();
    return system_error(error, "zygote: send the spawn request");
  }

  // The answer comes before any exit of the monitor it names (the zygote reaps only after
  // answering); exits of other monitors may come first: each is handed to its child, which
  // delivers it on a later turn of the loop. The zygote never has more than this one request
  // queued, so the send above does not wait on it while it waits on us.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
  for (;;) {
    Message got;
    const int read = read_message(socket_, &got);
    if (read < 0) {
      on_gone();
      return Error{UV_EPIPE, "zygote: gone before it answered"};
    }
    if (read == 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd ready{socket_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) == 0) {
        on_gone();  // a zygote that does not answer is of no more use; kill it
        return Error{UV_ETIMEDOUT, "zygote: no answer to a spawn request"};
      }
      continue;
    }
    if (got.reply.kind == ReplyKind::exited) {
      dispatch(got.reply.pid, got.reply.value);
      continue;
    }
    if (got.reply.kind == ReplyKind::failed) {
      if (got.fd >= 0) close(got.fd);
      return system_error(got.reply.value, "zygote: fork a monitor");
    }
    if (got.fd < 0) {
      on_gone();
      return Error{UV_EPROTO, "zygote: a spawn answered without its pidfd"};
    }
    auto* child = new ZygoteChild(loop_, got.reply.pid, got.fd, std::move(on_exit));
    children_[got.reply.pid] = child;
    return static_cast<ChildProcess*>(child);
  }
}

namespace {

struct OwnedFds {
  std::vector<int> fds;
  ~OwnedFds() {
    for (int fd : fds) close(fd);
  }
};

}  // namespace

Result<ChildProcess*> Zygote::start_child(const SpawnPlan& plan, uv_pipe_t* out, uv_pipe_t* err,
                                          const ChildProcess::OnExit& on_exit) {
  if (!plan.env.empty() || !plan.cwd.empty() || !plan.extra_pipes.empty() || plan.new_session)
    return Error{UV_EINVAL, "zygote: only a lockbox's plan can be forked"};
  OwnedFds theirs, ours;  // the monitor's ends (closed once sent), and ours until opened
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return system_error(errno, "open /dev/null");
  theirs.fds.push_back(null_fd);
  int our_ends[2] = {-1, -1};
  uv_pipe_t* pipes[2] = {out, err};
  for (int i = 0; i < 2; ++i) {
    if (pipes[i] == nullptr) {
      const int copy = fcntl(null_fd, F_DUPFD_CLOEXEC, 0);
      if (copy < 0) return system_error(errno, "dup /dev/null");
      theirs.fds.push_back(copy);
      continue;
    }
    int pair[2];  // a pipe, as ProcessCore::start makes: a flood can grow it (output_pipe.cc)
    if (pipe_cloexec(pair) != 0) return system_error(errno, "cannot make an output pipe");
    ours.fds.push_back(pair[0]);
    our_ends[i] = pair[0];
    theirs.fds.push_back(pair[1]);
  }
  theirs.fds.insert(theirs.fds.end(), plan.extra_fds.begin(), plan.extra_fds.end());
  // The extra fds are the caller's to close: sent as they are, not owned here.
  std::vector<int> sent = theirs.fds;
  theirs.fds.resize(3);
  STACKIE_TRY_ASSIGN(child, spawn(plan.argv, sent, plan.zygote_ahead, on_exit));
  for (int i = 0; i < 2; ++i) {
    if (our_ends[i] < 0) continue;
    if (const int opened = uv_pipe_open(pipes[i], our_ends[i]); opened != 0) {
      // The monitor runs already: kill it, and let its exit free it unreported.
      child->orphan([child] { (void)child->send_signal(SIGKILL); });
      return Error{opened, "open the block's output pipe: " + std::string(uv_strerror(opened))};
    }
    std::erase(ours.fds, our_ends[i]);  // the uv_pipe_t owns it now
  }
  return child;
}

void Zygote::on_readable() {
  for (;;) {
    Message got;
    const int read = read_message(socket_, &got);
    if (read == 0) return;
    if (read < 0) {
      on_gone();
      return;
    }
    if (got.fd >= 0) close(got.fd);  // only a spawn's answer has one; none is awaited here
    if (got.reply.kind == ReplyKind::exited) dispatch(got.reply.pid, got.reply.value);
  }
}

void Zygote::dispatch(int pid, int wait_status) {
  auto found = children_.find(pid);
  if (found == children_.end()) return;
  ZygoteChild* child = found->second;
  children_.erase(found);
  if (WIFSIGNALED(wait_status))
    child->exited(0, WTERMSIG(wait_status));
  else
    child->exited(WEXITSTATUS(wait_status), 0);
  if (children_.empty() && !spawning_ && alive_) retire();
}

// No monitor left: the zygote is told to exit (its end of file), so that nothing of the
// daemon's but the daemon runs while no block does. A spawn starts a new one (an exec).
void Zygote::retire() {
  alive_ = false;
  retired_ = true;
  poll_.close();
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
}

// The zygote died or broke its protocol. Its monitors died with it (PDEATHSIG): each reports
// an exit by SIGKILL, and the spawner starts later blocks by exec again.
void Zygote::on_gone() {
  if (!alive_) return;
  alive_ = false;
  poll_.close();
  if (process_ != nullptr && !process_exited_) uv_process_kill(process_, SIGKILL);
  auto children = std::move(children_);
  children_.clear();
  for (auto& [pid, child] : children) child->exited(0, SIGKILL);
}

}  // namespace stackie::spawn_detail
