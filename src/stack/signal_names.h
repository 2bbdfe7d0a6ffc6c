// The stop signals a block may name (stop_signal:), one table per platform
// (signal_names_posix.cc, signal_names_windows.cc): a stack file names signals, the number is
// the host's.
#pragma once

#include <span>

namespace stackie {

struct SignalName {
  const char* name;
  int number;
};

std::span<const SignalName> known_signals();

}  // namespace stackie
