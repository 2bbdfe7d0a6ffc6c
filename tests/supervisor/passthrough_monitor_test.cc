// The passthrough monitor (src/spawn/passthrough_monitor.h) run for real, as the daemon runs it:
// `stackied --passthrough-monitor DAEMON_PID -- CMD...`, here with this test as the "daemon".
// What it owes the block: every stop signal sent to the group, even one that arrived before the
// block existed, and a clean signal mask.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "support/process_wait.h"

namespace stackie {
namespace {

using namespace std::chrono_literals;

std::string stackied() {
  const char* build = std::getenv("STACKIE_BUILD_ROOT");
  return build ? std::string(build) + "/src/stackied" : "";
}

// Runs the monitor in front of `sleep 600` as the leader of its own group, with SIGTERM blocked
// in the mask it inherits and, when `pending` is set, already sent (pending across exec, as a
// group signal that arrives between the monitor's start and its fork would be).
pid_t start_monitor(bool pending) {
  const std::string program = stackied();
  const std::string parent = std::to_string(::getpid());
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &term, nullptr);
    if (pending) ::kill(::getpid(), SIGTERM);
    ::execl(program.c_str(), program.c_str(), "--passthrough-monitor", parent.c_str(), "--",
            "sleep", "600", nullptr);
    std::_Exit(127);
  }
  return pid;
}

class PassthroughMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(stackied().empty()) << "meson sets STACKIE_BUILD_ROOT"; }
  void TearDown() override {
    if (monitor_ <= 0) return;
    ::kill(-monitor_, SIGKILL);
    testing::wait_exit(monitor_, 5s);
  }
  // The monitor's exit code or 128 + signal, -1 if it still runs after 10 s.
  int monitor_exit() {
    const int status = testing::wait_exit(monitor_, 10s);
    if (status >= 0) monitor_ = -1;  // reaped: nothing left for TearDown
    return status;
  }
  pid_t monitor_ = -1;
};

TEST_F(PassthroughMonitorTest, AStopSignalSentBeforeTheBlockStartedStillStopsIt) {
  monitor_ = start_monitor(/*pending=*/true);
  EXPECT_EQ(monitor_exit(), 128 + SIGTERM)
      << "the SIGTERM the monitor held from before its fork never reached the block";
}

TEST_F(PassthroughMonitorTest, TheBlockStartsWithNoSignalBlocked) {
  monitor_ = start_monitor(/*pending=*/false);
  // Until the block runs, a group signal could reach the monitor alone (the case above).
  ASSERT_TRUE(testing::wait_for(
      [&] {
        std::string path =
            "/proc/" + std::to_string(monitor_) + "/task/" + std::to_string(monitor_) + "/children";
        FILE* file = std::fopen(path.c_str(), "r");
        if (file == nullptr) return false;
        int child = 0;
        bool found = std::fscanf(file, "%d", &child) == 1;
        std::fclose(file);
        return found;
      },
      5s));
  ::kill(-monitor_, SIGTERM);
  EXPECT_EQ(monitor_exit(), 128 + SIGTERM)
      << "the block kept the SIGTERM block the monitor's parent left in its mask";
}

}  // namespace
}  // namespace stackie
