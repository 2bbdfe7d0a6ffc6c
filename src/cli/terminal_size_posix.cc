#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/terminal_size.h"

namespace stackie::cli {

TerminalSize stdout_terminal_size() {
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return {};
  return {size.ws_col, size.ws_row};
}

}  // namespace stackie::cli
