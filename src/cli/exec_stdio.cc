#include "cli/exec_stdio.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace stackie::cli {

bool set_flag(int fd, int fd_flag, int status_flag) {
  if (fd_flag && fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | fd_flag) != 0) return false;
  if (status_flag && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | status_flag) != 0) return false;
  return true;
}

// No pipe2 on macOS.
Result<std::pair<Fd, Fd>> make_pipe() {
  int fds[2];
  if (pipe(fds) != 0) return system_error(errno, "pipe");
  std::pair<Fd, Fd> ends{Fd(fds[0]), Fd(fds[1])};
  if (!set_flag(fds[0], FD_CLOEXEC, 0) || !set_flag(fds[1], FD_CLOEXEC, 0))
    return system_error(errno, "pipe");
  return ends;
}

bool RawMode::enter(int fd) {
  if (tcgetattr(fd, &saved_) != 0) return false;
  termios raw = saved_;
  cfmakeraw(&raw);
  if (tcsetattr(fd, TCSADRAIN, &raw) != 0) return false;
  fd_ = fd;
  return true;
}

RawMode::~RawMode() {
  if (fd_ >= 0) tcsetattr(fd_, TCSADRAIN, &saved_);
}

namespace {

Result<Fd> open_pty_slave(int master) {
#ifdef TIOCGPTPEER
  // Linux 4.13: the slave of this very master, no path lookup in between.
  int peer = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (peer >= 0) return Fd(peer);
#endif
  if (grantpt(master) != 0 || unlockpt(master) != 0) return system_error(errno, "grantpt");
  const char* name = ptsname(master);
  if (name == nullptr) return system_error(errno, "ptsname");
  Fd slave(open(name, O_RDWR | O_NOCTTY));
  if (!slave.open() || !set_flag(slave.get(), FD_CLOEXEC, 0))
    return system_error(errno, std::string("open ") + name);
  return slave;
}

}  // namespace

Result<ExecStdio> stdio_on_pty() {
  ExecStdio w;
  w.pty = true;
  Fd master(posix_openpt(O_RDWR | O_NOCTTY));
  if (!master.open() || !set_flag(master.get(), FD_CLOEXEC, 0))
    return system_error(errno, "posix_openpt");
  if (unlockpt(master.get()) != 0) return system_error(errno, "unlockpt");
  auto slave = open_pty_slave(master.get());
  if (!slave.ok()) return slave.take_error();
  // The pty behaves like the caller's terminal (erase key, output processing) and has its size.
  termios mode;
  if (tcgetattr(0, &mode) == 0) tcsetattr(slave->get(), TCSANOW, &mode);
  winsize size;
  if (ioctl(0, TIOCGWINSZ, &size) == 0) ioctl(slave->get(), TIOCSWINSZ, &size);
  // CMD's stdout and stderr use the pty only where the caller's are a terminal too: a
  // redirected `stackie exec b -- pg_dump > file` gets pipes, no CR/LF translation.
  for (int fd : {1, 2}) {
    if (isatty(fd)) continue;
    auto pipe = make_pipe();
    if (!pipe.ok()) return pipe.take_error();
    w.child[fd] = std::move(pipe->second);
    (fd == 1 ? w.from_out : w.from_err) = std::move(pipe->first);
  }
  w.pty_echo_to = isatty(1) ? 1 : isatty(2) ? 2 : 0;
  for (int fd = 0; fd < 3; ++fd) {
    if (w.child[fd].open()) continue;
    w.child[fd] = Fd(fcntl(slave->get(), F_DUPFD_CLOEXEC, 3));
    if (!w.child[fd].open()) return system_error(errno, "dup");
  }
  w.from_pty = Fd(fcntl(master.get(), F_DUPFD_CLOEXEC, 3));
  if (!w.from_pty.open()) return system_error(errno, "dup");
  w.to_child = std::move(master);
  if (!set_flag(w.to_child.get(), 0, O_NONBLOCK)) return system_error(errno, "pty");
  return w;
}

Result<ExecStdio> stdio_on_pipes() {
  ExecStdio w;
  auto in = make_pipe();
  auto out = make_pipe();
  auto err = make_pipe();
  for (auto* p : {&in, &out, &err})
    if (!p->ok()) return p->take_error();
  w.child[0] = std::move(in->first);
  w.to_child = std::move(in->second);
  w.child[1] = std::move(out->second);
  w.from_out = std::move(out->first);
  w.child[2] = std::move(err->second);
  w.from_err = std::move(err->first);
  if (!set_flag(w.to_child.get(), 0, O_NONBLOCK)) return system_error(errno, "pipe");
  return w;
}

}  // namespace stackie::cli
