#include <csignal>

#include "stack/signal_names.h"

namespace stackie {

// The signals a service plausibly wants to be stopped with.
std::span<const SignalName> known_signals() {
  static constexpr SignalName kSignals[] = {
      {"SIGHUP", SIGHUP},   {"SIGINT", SIGINT},   {"SIGQUIT", SIGQUIT}, {"SIGKILL", SIGKILL},
      {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGTERM", SIGTERM}, {"SIGWINCH", SIGWINCH},
  };
  return kSignals;
}

}  // namespace stackie
