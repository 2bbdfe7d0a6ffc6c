// The stdio `stackie exec` gives CMD (issue 14): a pty made for it when the caller's stdin is a
// terminal, pipes otherwise; never a descriptor of the caller's. exec_relay.cc moves the bytes.
#pragma once

#include <termios.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace stackie::cli {

// Owns one descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Adds FD_CLOEXEC (fd_flag) and/or O_NONBLOCK (status_flag); false with errno on failure.
bool set_flag(int fd, int fd_flag, int status_flag);

// Both ends close-on-exec: {read end, write end}.
Result<std::pair<Fd, Fd>> make_pipe();

// argv and envp as execve(2) takes them, built before fork(): the child must not allocate.
class ExecVectors {
 public:
  ExecVectors(std::vector<std::string> argv, std::vector<std::string> env)
      : strings_{std::move(argv), std::move(env)} {
    for (int i = 0; i < 2; ++i) {
      for (auto& s : strings_[i]) pointers_[i].push_back(s.data());
      pointers_[i].push_back(nullptr);
    }
  }
  char** argv() { return pointers_[0].data(); }
  char** envp() { return pointers_[1].data(); }

 private:
  std::vector<std::string> strings_[2];
  std::vector<char*> pointers_[2];
};

// The caller's terminal in raw mode for as long as this lives: every key goes to CMD's pty
// as typed, and the pty's own line discipline (set up like the caller's) does the rest.
class RawMode {
 public:
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;
  RawMode() = default;
  bool enter(int fd);  // false with errno: fd stays as it was
  ~RawMode();

 private:
  termios saved_{};
  int fd_ = -1;
};

// CMD's side of stdio, and ours.
struct ExecStdio {
  Fd child[3];          // become the child's 0, 1, 2
  Fd to_child;          // the pty master, or the write end of the stdin pipe
  Fd from_pty;          // a dup of the master, read (pty mode)
  Fd from_out;          // stdout pipe's read end (when CMD's stdout is not the pty)
  Fd from_err;          // stderr pipe's read end
  int pty_echo_to = 1;  // the caller's fd the pty's output goes to
  bool pty = false;
};

// CMD on a new pty (its stdout/stderr on pipes where the caller's are not terminals), set up
// like the caller's terminal on fd 0.
Result<ExecStdio> stdio_on_pty();
// CMD on three pipes.
Result<ExecStdio> stdio_on_pipes();

}  // namespace stackie::cli
