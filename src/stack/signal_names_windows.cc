// Windows has no signals to send to another process: a block is stopped with CTRL_BREAK to its
// process group, then its job is terminated after stop_timeout (docs/platforms.md). The names
// are still accepted so that one stack file serves every platform; the numbers are Linux's and
// only identify the name here.
#include "stack/signal_names.h"

namespace stackie {

std::span<const SignalName> known_signals() {
  static constexpr SignalName kSignals[] = {
      {"SIGHUP", 1},   {"SIGINT", 2},   {"SIGQUIT", 3},  {"SIGKILL", 9},
      {"SIGUSR1", 10}, {"SIGUSR2", 12}, {"SIGTERM", 15}, {"SIGWINCH", 28},
  };
  return kSignals;
}

}  // namespace stackie
