#include <string.h>

#include "base/signal_name.h"

namespace stackie {

std::string signal_name(int signum) {
  const char* abbrev = sigabbrev_np(signum);
  return abbrev ? std::string("SIG") + abbrev : std::to_string(signum);
}

}  // namespace stackie
