#include "supervisor/exit_description.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>

#include "base/signal_name.h"

namespace stackie {

// "SIGTERM" for any signal the C library knows (stack/block_def.h's stop_signal_name knows only
// the stop signals a block may declare), else the number.
std::string signal_text(int signum) {
  return signal_name(signum);
}

int parse_signal_text(std::string_view text) {
  if (text.empty()) return 0;
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (text.size() > 2) return 0;
    int number = std::stoi(std::string(text));
    return number >= 1 && number < NSIG ? number : 0;
  }
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.starts_with("SIG")) upper.erase(0, 3);
  for (int signum = 1; signum < NSIG; ++signum)
    if (signal_name(signum) == "SIG" + upper) return signum;
  return 0;
}

int lockbox_signal(const ExitStatus& status, SandboxKind kind) {
  int64_t code = status.exit_status;
  if (status.term_signal != 0 || kind == SandboxKind::passthrough) return 0;
  return code > 128 && code < 128 + 65 ? static_cast<int>(code - 128) : 0;
}

std::string describe_exit(const ExitStatus& status, SandboxKind kind) {
  if (!status.setup_error.empty()) return status.setup_error;
  if (status.term_signal != 0) return "killed by " + signal_name(status.term_signal);
  int64_t code = status.exit_status;
  if (int signum = lockbox_signal(status, kind); signum != 0)
    return "killed by " + signal_name(signum);
  if (code == 126) return "exit status 126: command not executable";
  if (code == 127) return "exit status 127: command not found";
  return "exit status " + std::to_string(code);
}

}  // namespace stackie
