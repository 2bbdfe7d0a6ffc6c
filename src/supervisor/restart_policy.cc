#include "supervisor/restart_policy.h"

#include <algorithm>

namespace stackie {

std::optional<Milliseconds> RestartBackoff::next(Milliseconds ran_for) {
  if (ran_for >= tuning_.stable_after) restarts_ = 0;
  if (restarts_ >= tuning_.max_restarts) return std::nullopt;
  Milliseconds delay = tuning_.initial_delay;
  for (int i = 0; i < restarts_ && delay < tuning_.max_delay; ++i) delay *= 2;
  ++restarts_;
  return std::min(delay, tuning_.max_delay);
}

AfterExit decide_after_exit(RestartPolicy policy, bool success, bool forced_failure) {
  bool failed = forced_failure || !success;
  switch (policy) {
    case RestartPolicy::always: return AfterExit::restart;
    case RestartPolicy::on_failure: return failed ? AfterExit::restart : AfterExit::stop;
    case RestartPolicy::no: return failed ? AfterExit::fail : AfterExit::stop;
  }
  return AfterExit::fail;
}

}  // namespace stackie
