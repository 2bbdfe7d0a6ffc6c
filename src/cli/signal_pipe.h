// The signals that stop `stackie up` in the foreground (and redraw `top`), delivered as numbers
// the verb's loop collects: a self-pipe on POSIX (signal_pipe_posix.cc), the console's control
// handler on Windows (signal_pipe_windows.cc, where Ctrl-C is SIGINT and Ctrl-Break, closing the
// console, logoff and shutdown are SIGTERM).
#pragma once

#include <vector>

namespace stackie::cli {

// SIGINT, SIGTERM, SIGHUP and SIGWINCH delivered as bytes on a pipe the loop polls (the
// handler only writes the signal number); the previous handlers come back on destruction.
class SignalPipe {
 public:
  SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;
  ~SignalPipe();
  // The pipe to poll (POSIX); -1 on Windows, where drain() is polled on a timer instead.
  int fd() const { return read_fd_; }
  // The signals received since the last call, in order.
  std::vector<int> drain();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
};

// Whether `signum` from drain() asks to stop (every one but SIGWINCH).
bool is_stopping_signal(int signum);

}  // namespace stackie::cli
