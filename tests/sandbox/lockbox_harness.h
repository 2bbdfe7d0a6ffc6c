// Runs stackie-lockbox (and the probe inside it) as a child with pipes, bounded in time, for the
// sandbox suite. Sandbox tests must run unprivileged: as root they fail on purpose.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace stackie::testing {

struct RunResult {
  int exit_code = -1;  // -1: killed by the timeout
  std::string out;
  std::string err;
  std::string error_fd;  // what the lockbox wrote on --error-fd 3 (when with_error_fd)
};

struct RunOptions {
  std::string stdin_data;
  bool with_error_fd = false;
  int timeout_ms = 10000;
  std::vector<std::string> extra_env;  // "NAME=VALUE" in the lockbox's own environment
  int leak_fd = -1;                    // an fd left open (not CLOEXEC) in the lockbox
};

std::string lockbox_path();
// The backend run_probe and Background ask for (--backend): "" (the lockbox's choice, or
// $STACKIE_TEST_LOCKBOX_BACKEND), "namespaces" or "landlock" (the probe at its own path).
void use_backend(const std::string& backend);
const std::string& current_backend();
bool landlock_backend();  // current_backend() is "landlock"
bool kernel_has_landlock();
std::string probe_path();
// Where the probe is inside the sandbox run_probe makes: /probe, or its own path (landlock).
std::string probe_inside();
// Runs argv; a stackie-lockbox run (argv[0] is lockbox_path()) gets the current backend's
// --backend too, unless argv names one itself.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});
// lockbox --ro PROBE:/probe EXTRA... -- /probe ARGS...
RunResult run_probe(const std::vector<std::string>& lockbox_args,
                    const std::vector<std::string>& probe_args, const RunOptions& options = {});
std::string trim(const std::string& text);

// A lockbox running the probe (or `program`, with the same arguments) in the background with
// its stdout readable; killed (SIGKILL) in the destructor.
class Background {
 public:
  explicit Background(const std::vector<std::string>& probe_args,
                      const std::vector<std::string>& flags = {},
                      const std::string& program = "/probe");
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  // Reads until `text` appears (true) or EOF/timeout (false).
  bool wait_for(const std::string& text, int timeout_ms = 5000) {
    return read_until(text, timeout_ms);
  }
  // True when stdout reaches EOF within the timeout: every holder of the pipe is gone.
  bool eof_within(int timeout_ms) { return !read_until("\x01never", timeout_ms) && eof_; }
  // True when stdout is at EOF now, without waiting.
  bool at_eof();
  int wait_exit();
  pid_t pid() const { return pid_; }
  const std::string& output() const { return seen_; }

 private:
  bool read_until(const std::string& text, int timeout_ms);
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int out_ = -1;
  bool eof_ = false;
  std::string seen_;
};

}  // namespace stackie::testing

// A check the landlock backend cannot make hold (stackie-lockbox(1) BACKENDS), skipped with the
// weaker guarantee that holds instead, only when the suite runs with the landlock backend.
#define STACKIE_SKIP_UNDER_LANDLOCK(weaker)                              \
  do {                                                                   \
    if (::stackie::testing::landlock_backend())                          \
      GTEST_SKIP() << "weaker under the landlock backend: " << (weaker); \
  } while (0)

// In every sandbox test's SetUp: a root run must never pass silently. A suite run with the
// landlock backend forced skips on a kernel without Landlock (saying so).
#define STACKIE_REQUIRE_UNPRIVILEGED()                                                        \
  do {                                                                                        \
    if (geteuid() == 0)                                                                       \
      FAIL() << "the sandbox suite must run as an unprivileged user (scripts/test runs it "   \
                "as stackie-test; or: runuser -u stackie-test -- " __FILE__ "'s binary)";     \
    if (::stackie::testing::landlock_backend() && !::stackie::testing::kernel_has_landlock()) \
      GTEST_SKIP() << "the landlock backend is forced but this kernel has no Landlock";       \
  } while (0)
