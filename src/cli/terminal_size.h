// The size of the terminal on stdout, for views that fit their lines to it: ioctl(TIOCGWINSZ)
// on POSIX (terminal_size_posix.cc), the console's window on Windows (terminal_size_windows.cc).
#pragma once

namespace stackie::cli {

// 0 in a field the terminal does not say (stdout is not one): the caller keeps its default.
struct TerminalSize {
  int columns = 0;
  int rows = 0;
};
TerminalSize stdout_terminal_size();

}  // namespace stackie::cli
