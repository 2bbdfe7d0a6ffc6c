#include <signal.h>

#include <cctype>

#include "base/signal_name.h"

namespace stackie {

// sys_signame holds lower-case names without the prefix ("term").
std::string signal_name(int signum) {
  if (signum <= 0 || signum >= NSIG || sys_signame[signum] == nullptr)
    return std::to_string(signum);
  std::string name = "SIG";
  for (const char* c = sys_signame[signum]; *c != '\0'; ++c)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  return name;
}

}  // namespace stackie
