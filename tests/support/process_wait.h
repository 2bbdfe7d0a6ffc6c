// The one way the tests wait: for a child process to end, or for a condition, always bounded
// (a test that hangs proves nothing) and polling, so a slow runner only makes it slower.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

namespace stackie::testing {

// Polls `done` every 20 ms until it is true or `timeout` has passed; returns its last answer.
template <typename F>
bool wait_for(F done, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// The exit code (or 128 + signal) of the child `pid` once it has ended and is reaped, -1 when it
// still runs after `timeout`.
inline int wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  const bool ended = wait_for([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!ended) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace stackie::testing
