#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>

#include "base/posix_io.h"
#include "cli/signal_pipe.h"

namespace stackie::cli {

namespace {

int g_signal_write_fd = -1;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
struct sigaction g_saved[sizeof kSignals / sizeof kSignals[0]];

void on_signal(int signum) {
  int saved_errno = errno;
  unsigned char byte = static_cast<unsigned char>(signum);
  ssize_t ignored = ::write(g_signal_write_fd, &byte, 1);  // full pipe: the loop is behind
  (void)ignored;
  errno = saved_errno;
}

}  // namespace

SignalPipe::SignalPipe() {
  int fds[2];
  if (pipe_cloexec(fds, true) != 0) return;  // no pipe: signals keep defaults
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  g_signal_write_fd = write_fd_;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &g_saved[i]);
}

SignalPipe::~SignalPipe() {
  if (read_fd_ < 0) return;
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &g_saved[i], nullptr);
  g_signal_write_fd = -1;
  ::close(read_fd_);
  ::close(write_fd_);
}

std::vector<int> SignalPipe::drain() {
  std::vector<int> signals;
  unsigned char buffer[64];
  for (;;) {
    ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    signals.insert(signals.end(), buffer, buffer + n);
  }
  return signals;
}

bool is_stopping_signal(int signum) {
  return signum == SIGINT || signum == SIGTERM || signum == SIGHUP;
}

}  // namespace stackie::cli
