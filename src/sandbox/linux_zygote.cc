#include "sandbox/linux_zygote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "sandbox/linux_init_ahead.h"
#include "sandbox/linux_namespaces.h"
#include "sandbox/zygote_protocol.h"

namespace stackie::linux_sandbox {
namespace {

using zygote::ReplyKind;
using zygote::ZygoteReply;
using zygote::ZygoteRequest;

// Set in each monitor the zygote forks: whom to tell that its sandbox is gone, and as which
// monitor (report_sandbox_gone). Zero in the zygote itself and in an exec'd lockbox.
struct ThisMonitor {
  pid_t zygote = 0;
  uint32_t generation = 0;
};
ThisMonitor this_monitor;

// The zygote's monitors that are not reaped yet, by pid: the generation each was forked as,
// whether its word that its sandbox is gone is taken (zygote_protocol.h, gone_signal), and
// whether its exit was already reported on that word.
struct Monitor {
  uint32_t generation = 0;
  bool may_report = false;
  bool reported = false;
};

// Only a monitor of the namespace lockbox without a cgroup says that its sandbox is gone, and the
// daemon asks for namespaces ahead for just those requests (spawn_lockbox.cc): a report for
// any other (a landlock monitor, whose blocks share the zygote's pid namespace and could forge
// one) is not taken.
bool may_report(const ZygoteRequest& request) {
  return (request.ahead & zygote::kAheadNamespaces) != 0;
}

// What the zygote's loop and the functions it calls share.
struct Zygote {
  int sock = -1;       // the daemon's
  int signal_fd = -1;  // SIGCHLD and gone_signal(), blocked
  sigset_t original_mask{};
  LockboxMain run = nullptr;
  std::unordered_map<pid_t, Monitor> monitors;
  uint32_t next_generation = 1;

  // Before a fork: the generation of the monitor it makes.
  uint32_t take_generation() { return next_generation++ & zygote::kGenerationMask; }
};

struct Received {
  std::vector<char> bytes;
  std::vector<int> fds;
  bool eof = false;
  bool truncated = false;
};

void close_all(const std::vector<int>& fds) {
  for (int fd : fds) close(fd);
}

// One datagram and the descriptors that came with it (close-on-exec, so that no other monitor
// forked meanwhile holds them past its exec).
Received receive(int sock) {
  Received out;
  // The datagram's size first, so that its buffer is no larger: a monitor keeps the request's
  // bytes (its argv) for its whole life, and a zero-filled 64 KiB per block was 64 KiB of
  // private memory per block (bench/memory). Over kMaxRequest it is cut, and refused below.
  ssize_t size;
  do size = recv(sock, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  while (size < 0 && errno == EINTR);
  if (size <= 0) {
    out.eof = true;
    return out;
  }
  out.bytes.resize(std::min(static_cast<size_t>(size), zygote::kMaxRequest));
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * zygote::kMaxFds)];
  iovec io{out.bytes.data(), out.bytes.size()};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(sock, &message, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    out.eof = true;
    return out;
  }
  out.bytes.resize(static_cast<size_t>(n));
  zygote::take_passed_fds(message, out.fds);
  out.truncated = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  return out;
}

void send_reply(int sock, const ZygoteReply& reply, int fd = -1) {
  // A blocking send: the daemon reads every reply, and a full socket only delays the zygote.
  zygote::send_datagram(sock, &reply, sizeof reply, &fd, fd >= 0 ? 1 : 0);
}

// Passes a request on to a spare, bytes and descriptors as they came.
bool pass_on(int sock, const Received& request) {
  return zygote::send_datagram(sock, request.bytes.data(), request.bytes.size(), request.fds.data(),
                               request.fds.size()) == static_cast<ssize_t>(request.bytes.size());
}

// The header of a request (checked by parse_argv).
ZygoteRequest header_of(const std::vector<char>& bytes) {
  ZygoteRequest header;
  header.magic = 0;
  if (bytes.size() >= sizeof header) std::memcpy(&header, bytes.data(), sizeof header);
  return header;
}

// The argv of a request, or empty when the datagram is not a well-formed one.
std::vector<char*> parse_argv(std::vector<char>& bytes, size_t fd_count) {
  const ZygoteRequest header = header_of(bytes);
  if (header.magic != zygote::kMagic || header.argc == 0 || header.argc > zygote::kMaxArgs ||
      header.fd_count != fd_count || fd_count < 3 || (header.ahead & ~zygote::kAheadKnown) != 0)
    return {};
  std::vector<char*> argv;
  size_t at = sizeof header;
  while (argv.size() < header.argc && at < bytes.size()) {
    char* start = bytes.data() + at;
    auto* end = static_cast<char*>(std::memchr(start, '\0', bytes.size() - at));
    if (end == nullptr) return {};
    argv.push_back(start);
    at = static_cast<size_t>(end - bytes.data()) + 1;
  }
  if (argv.size() != header.argc || at != bytes.size()) return {};
  argv.push_back(nullptr);
  return argv;
}

// In the forked child: become what an exec'd lockbox would be at its first instruction, as far
// as it can tell: the request's fds as 0, 1, 2, ..., nothing else open but the socket to a pid 1
// forked ahead, right after them (init_ahead(), which the lockbox does not let an option name),
// no signal blocked.
[[noreturn]] void become_monitor(int sock, int signal_fd, const sigset_t& original_mask,
                                 const std::vector<int>& fds, std::vector<char*>& argv,
                                 LockboxMain run) {
  if (sock >= 0) close(sock);
  if (signal_fd >= 0) close(signal_fd);
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  const int count = static_cast<int>(fds.size());
  InitAhead& init = init_ahead();
  // Out of the way of 0..count first (pid 1's socket too), so that no dup below overwrites a
  // later source.
  auto move_up = [count](int fd) {
    const int high = fcntl(fd, F_DUPFD_CLOEXEC, count + 3);
    if (high < 0) _exit(125);
    return high;
  };
  if (init.sock >= 0) init.sock = move_up(init.sock);
  std::vector<int> moved;
  for (int fd : fds) moved.push_back(move_up(fd));
  for (int i = 0; i < count; ++i)
    if (dup2(moved[static_cast<size_t>(i)], i) < 0) _exit(125);  // dup2 clears close-on-exec
  int first_closed = count;
  if (init.sock >= 0) {
    if (dup3(init.sock, count, O_CLOEXEC) < 0) _exit(125);
    init.sock = first_closed++;
  }
  if (syscall(SYS_close_range, static_cast<unsigned>(first_closed), ~0U, 0) != 0) {
    for (int fd = first_closed; fd < 1024; ++fd) close(fd);
  }
  _exit(run(static_cast<int>(argv.size()) - 1, argv.data()));
}

// First thing in a child of the zygote: die with it from now on, not only once the monitor's
// code sets that. A zygote killed in between would otherwise leave a monitor (and its block)
// running that the daemon was told is dead; the lockbox's own check of its parent cannot see
// it, as a re-parented process reads its new parent twice.
void die_with(pid_t zygote) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != zygote) _exit(0);
}

// A monitor forked before its request: it waits on its end of a socketpair for the request the
// zygote passes on. A spawn then costs the daemon a relay instead of a fork (on this project's
// VMs a fork of even the small zygote took 0.25-0.5 ms, with page-table updates trapping to the
// hypervisor), and the zygote forks the next spare once it has answered, while the daemon
// prepares its next block. The spare is this pid, pidfd and socket, or none (pid -1).
//
// While it waits, a spare also makes the namespaces of the kind of sandbox the last request
// asked for (`ahead`, zygote_protocol.h): unshare and its maps took 0.6-0.9 ms of each spawn
// here. It then takes only a request of that kind; one of another kind drops it (see
// usable_for). A spare with nothing ahead takes any request.
struct Spare {
  pid_t pid = -1;
  int pidfd = -1;
  int sock = -1;
  uint32_t ahead = 0;
};

bool usable_for(const Spare& spare, const ZygoteRequest& request) {
  return spare.pid >= 0 && (spare.ahead == 0 || spare.ahead == request.ahead);
}

void drop(Spare& spare) {
  if (spare.pid < 0) return;
  // Killed, not told: its exit is reported like any monitor's, for a pid the daemon never
  // heard of, which it ignores.
  syscall(SYS_pidfd_send_signal, spare.pidfd, SIGKILL, nullptr, 0);
  close(spare.pidfd);
  close(spare.sock);
  spare = Spare{};
}

// In a spare: waits until the zygote sends something (a request, or its end of file); false
// when pid 1 forked ahead (`init_sock`, which pid 1 never writes to) is gone first.
bool wait_for_request(int sock, int init_sock) {
  pollfd ready[2] = {{sock, POLLIN, 0}, {init_sock, POLLIN, 0}};
  for (;;) {
    const int count = poll(ready, init_sock >= 0 ? 2 : 1, -1);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return true;  // let receive say what is wrong
    if (init_sock >= 0 && ready[1].revents != 0) return false;
    return true;
  }
}

Spare fork_spare(Zygote& z, uint32_t ahead) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return {};
  const pid_t zygote = getpid();
  const uint32_t generation = z.take_generation();
  const pid_t pid = fork();
  if (pid == 0) {
    die_with(zygote);
    this_monitor = {zygote, generation};
    close(pair[0]);
    close(z.sock);
    close(z.signal_fd);
    // Whatever fails here is kept and reported by the monitor for its request
    // (enter_new_namespaces), as an exec'd lockbox would report it.
    if (ahead & zygote::kAheadNamespaces) {
      make_namespaces_ahead((ahead & zygote::kAheadOwnNetwork) != 0,
                            (ahead & zygote::kAheadRootInside) != 0);
      if (pid_namespace_made_ahead()) fork_init_ahead();
    }
    // A pid 1 forked ahead that dies (killed, say) leaves a pid namespace no process can be
    // forked into: this spare goes, and the zygote forks a monitor on the spot instead.
    if (!wait_for_request(pair[1], init_ahead().sock)) _exit(0);
    Received request = receive(pair[1]);  // the zygote's end of file: it is gone, so are we
    if (request.eof || request.truncated) _exit(0);
    std::vector<char*> argv = parse_argv(request.bytes, request.fds.size());
    if (argv.empty()) _exit(125);  // the zygote checked it: nothing else sends here
    become_monitor(pair[1], -1, z.original_mask, request.fds, argv, z.run);
  }
  close(pair[1]);
  if (pid < 0) {
    close(pair[0]);
    return {};
  }
  z.monitors[pid] = Monitor{generation};
  Spare spare{pid, static_cast<int>(syscall(SYS_pidfd_open, pid, 0)), pair[0], ahead};
  if (spare.pidfd < 0) {
    kill(pid, SIGKILL);  // not reaped yet, so still ours; reported and ignored as above
    close(spare.sock);
    return {};
  }
  return spare;
}

// Forks the monitor on the spot (no spare, or the spare would not take the request).
void fork_monitor(Zygote& z, Received& request, std::vector<char*>& argv) {
  const pid_t zygote = getpid();
  const uint32_t generation = z.take_generation();
  pid_t pid = fork();
  if (pid == 0) {
    die_with(zygote);
    this_monitor = {zygote, generation};
    become_monitor(z.sock, z.signal_fd, z.original_mask, request.fds, argv, z.run);
  }
  const int fork_errno = errno;
  close_all(request.fds);  // the monitor's own now; the daemon waits for their ends of file
  if (pid < 0) {
    send_reply(z.sock, ZygoteReply{ReplyKind::failed, 0, fork_errno});
    return;
  }
  z.monitors[pid] = Monitor{generation, may_report(header_of(request.bytes))};
  // Not reaped before the reply is sent (SIGCHLD is only read in the loop), so the pidfd is
  // this child's even when it has already exited.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const int pidfd_errno = errno;
    kill(pid, SIGKILL);  // the daemon could not signal it safely; it gets its exit as usual
    send_reply(z.sock, ZygoteReply{ReplyKind::failed, pid, pidfd_errno});
    return;
  }
  send_reply(z.sock, ZygoteReply{ReplyKind::spawned, pid, 0}, pidfd);
  close(pidfd);
}

void handle_request(Zygote& z, Received& request, Spare& spare) {
  std::vector<char*> argv = parse_argv(request.bytes, request.fds.size());
  if (request.truncated || argv.empty()) {
    close_all(request.fds);
    send_reply(z.sock, ZygoteReply{ReplyKind::failed, 0, EPROTO});
    return;
  }
  if (usable_for(spare, header_of(request.bytes)) && pass_on(spare.sock, request)) {
    close_all(request.fds);  // the spare has its own copies
    z.monitors[spare.pid].may_report = may_report(header_of(request.bytes));
    send_reply(z.sock, ZygoteReply{ReplyKind::spawned, spare.pid, 0}, spare.pidfd);
    close(spare.pidfd);
    close(spare.sock);
    spare = Spare{};
  } else {
    drop(spare);  // dead, broken, or in namespaces of another kind: it would not take it
    fork_monitor(z, request, argv);
  }
  // Not the next spare yet: see kSpareDelayMs.
}

// When the next spare is forked. Not right after a spawn's answer, as it was: on a machine with
// two cores, that fork (0.3-0.5 ms of page-table copying here) and the new spare's start ran
// while the monitor just spawned built its sandbox, and took the CPU from it (perf trace: the
// monitor stood still for 1.9 ms between its lo ioctl and its next call, while the zygote
// forked). The next spare comes once a monitor exits (a block as short as bench/spawn's
// /bin/true: its spawn is done) or once the zygote has had no request for this long (a block
// that runs on: its setup is done by then). A request that finds no spare has its monitor
// forked on the spot, as before; back to back, that cost nothing measurable (bench: 10 and 20
// spawns in a row, answered and exited in the same time either way), as the single-threaded
// zygote forked the spare between those requests anyway.
constexpr int kSpareDelayMs = 20;

// A monitor's word that its sandbox is gone (gone_signal()), answered `exited` at once with the
// status its exit will have. Taken only from a namespace monitor not reaped yet and as the
// generation it was forked as: a report read after its monitor's reaping names nobody (its pid
// may be another monitor's by then). The sender's pid in a queued signal is the sender's word,
// not the kernel's: no sandboxed block can reach the zygote (a namespace block is in a pid
// namespace of its own; a daemon that runs landlock blocks runs no namespace monitor), but an
// unsandboxed process of the user's could, as it could kill the zygote and every block.
void take_gone_report(Zygote& z, const signalfd_siginfo& info) {
  if (info.ssi_code != SI_QUEUE) return;
  const auto found = z.monitors.find(static_cast<pid_t>(info.ssi_pid));
  if (found == z.monitors.end() || !found->second.may_report || found->second.reported ||
      found->second.generation != zygote::generation_of(info.ssi_int))
    return;
  found->second.reported = true;
  const int status = zygote::exit_code_of(info.ssi_int) << 8;  // as waitpid gives _exit(code)
  send_reply(z.sock, ZygoteReply{ReplyKind::exited, found->first, status});
}

// The signals first (a monitor's report is queued before its exit), then every monitor that
// has exited, answered unless its own report came first.
void reap(Zygote& z) {
  signalfd_siginfo info;
  while (read(z.signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (static_cast<int>(info.ssi_signo) == zygote::gone_signal()) take_gone_report(z, info);
  }
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    const auto found = z.monitors.find(pid);
    const bool reported = found != z.monitors.end() && found->second.reported;
    if (found != z.monitors.end()) z.monitors.erase(found);
    if (!reported) send_reply(z.sock, ZygoteReply{ReplyKind::exited, pid, status});
  }
}

}  // namespace

void report_sandbox_gone(int exit_code) {
  if (this_monitor.zygote == 0 || getppid() != this_monitor.zygote) return;
  // The block's stdout and stderr, which this process holds too, go first: the daemon then has
  // the end of the block's output before it hears of the block's end.
  for (int fd = 0; fd <= 2; ++fd) close(fd);
  sigval value{};
  value.sival_int = zygote::gone_value(this_monitor.generation, exit_code);
  // Not queued (the user's limit of pending signals): the zygote reports the exit when it
  // reaps this process, as it does for any monitor.
  sigqueue(this_monitor.zygote, zygote::gone_signal(), value);
}

int serve_zygote(int sock, LockboxMain run) {
  // Dies with the daemon; the monitors die with it (their own PDEATHSIG, run_sandboxed).
  pid_t caller = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != caller) return 1;
  Zygote z;
  z.sock = sock;
  z.run = run;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGCHLD);
  sigaddset(&signals, zygote::gone_signal());
  sigprocmask(SIG_BLOCK, &signals, &z.original_mask);
  z.signal_fd = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (z.signal_fd < 0) return 1;
  // What the next spare makes ahead: what the last request asked for (the first spare, before
  // any, makes nothing).
  uint32_t ahead = 0;
  Spare spare = fork_spare(z, ahead);
  // Whether an idle zygote without a spare still tries to fork one: not after that failed (no
  // retry every kSpareDelayMs while forks fail, say at the user's process limit), until the
  // next request.
  bool spare_wanted = true;
  for (;;) {
    pollfd ready[2] = {{sock, POLLIN, 0}, {z.signal_fd, POLLIN, 0}};
    const int ready_count = poll(ready, 2, spare.pid < 0 && spare_wanted ? kSpareDelayMs : -1);
    if (ready_count < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready_count == 0) {  // idle for kSpareDelayMs with no spare
      spare = fork_spare(z, ahead);
      spare_wanted = spare.pid >= 0;
      continue;
    }
    if (ready[1].revents & POLLIN) {
      reap(z);
      if (spare.pid >= 0 && z.monitors.count(spare.pid) == 0) {
        // A spare that exited before its request (its pid 1 forked ahead died): no use, and
        // none forked again until the next request, so that this cannot become a loop.
        close(spare.pidfd);
        close(spare.sock);
        spare = Spare{};
        spare_wanted = false;
      } else if (spare.pid < 0) {
        // A monitor's exit, reported: the next spare now, before the daemon's next request.
        spare = fork_spare(z, ahead);
      }
    }
    if (ready[0].revents & POLLIN) {
      Received request = receive(sock);
      if (request.eof) break;
      handle_request(z, request, spare);
      const ZygoteRequest header = header_of(request.bytes);
      if (header.magic == zygote::kMagic && (header.ahead & ~zygote::kAheadKnown) == 0)
        ahead = header.ahead;
      spare_wanted = true;
    } else if (ready[0].revents & (POLLHUP | POLLERR)) {
      break;
    }
  }
  // The daemon is gone or let us go: the spare goes first (it would see our end of file, but
  // only after we are gone, and nothing of the daemon's may outlive the zygote), then the
  // monitors die with us (their PDEATHSIG).
  const pid_t spare_pid = spare.pid;
  drop(spare);
  if (spare_pid > 0) waitpid(spare_pid, nullptr, 0);
  return 0;
}

}  // namespace stackie::linux_sandbox
