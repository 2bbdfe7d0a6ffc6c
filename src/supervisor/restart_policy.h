// What happens after a block's process ends: the restart policy (no | on-failure | always) and
// the exponential backoff (100 ms doubling to 30 s, reset after 30 s of running, a maximum
// number of consecutive restarts after which the block is `failed`). Pure: no clock, no loop.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "stack/stack_model.h"

namespace stackie {

struct RestartTuning {
  Milliseconds initial_delay{100};
  Milliseconds max_delay{30000};
  Milliseconds stable_after{30000};  // a run this long forgets earlier failures
  int max_restarts = 10;             // consecutive restarts before giving up
};

class RestartBackoff {
 public:
  explicit RestartBackoff(RestartTuning tuning = {}) : tuning_(tuning) {}

  // The process ran for `ran_for`. Returns the delay before the next attempt, or nullopt when
  // the block has used up its restarts.
  std::optional<Milliseconds> next(Milliseconds ran_for);
  int restarts() const { return restarts_; }
  const RestartTuning& tuning() const { return tuning_; }
  void reset() { restarts_ = 0; }

 private:
  RestartTuning tuning_;
  int restarts_ = 0;  // consecutive, since the last stable run
};

enum class AfterExit { stop, restart, fail };

// success: the process exited 0 on its own. forced_failure: we stopped it because it was
// unhealthy (always a failure, whatever its status).
AfterExit decide_after_exit(RestartPolicy policy, bool success, bool forced_failure);

}  // namespace stackie
