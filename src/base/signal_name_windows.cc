// Windows: the C runtime's few signals (<signal.h>) and the ones libuv adds for uv_kill and
// uv_signal (SIGHUP, SIGKILL, SIGWINCH), with the numbers they have there.
#include <signal.h>

#include "base/signal_name.h"

namespace stackie {

std::string signal_name(int signum) {
  struct Named {
    int number;
    const char* name;
  };
  static constexpr Named kNames[] = {
      {1, "SIGHUP"},        {SIGINT, "SIGINT"},   {SIGILL, "SIGILL"},   {SIGFPE, "SIGFPE"},
      {9, "SIGKILL"},       {SIGSEGV, "SIGSEGV"}, {SIGTERM, "SIGTERM"}, {SIGBREAK, "SIGBREAK"},
      {SIGABRT, "SIGABRT"}, {28, "SIGWINCH"},
  };
  for (const auto& named : kNames)
    if (named.number == signum) return named.name;
  return std::to_string(signum);
}

}  // namespace stackie
