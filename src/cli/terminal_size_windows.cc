#include <windows.h>

#include "cli/terminal_size.h"

namespace stackie::cli {

// The visible window, not the screen buffer (which is often 9001 rows tall).
TerminalSize stdout_terminal_size() {
  CONSOLE_SCREEN_BUFFER_INFO info;
  if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &info)) return {};
  return {info.srWindow.Right - info.srWindow.Left + 1,
          info.srWindow.Bottom - info.srWindow.Top + 1};
}

}  // namespace stackie::cli
