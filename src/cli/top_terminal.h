// The terminal under `stackie top`: raw mode on the alternate screen while the UI runs, and
// the keys read from it.
//
// Why a dozen escape sequences of our own rather than ncurses: the UI needs cursor
// positioning, erase, SGR colours, the alternate screen and raw input, which every VT100
// descendant (xterm, tmux, screen, the Linux console, what SSH carries) understands the same
// way. ncurses would add terminfo lookups, its own signal handlers (SIGINT, SIGWINCH, SIGTSTP)
// and its own input loop to reconcile with our poll() on the daemon socket, and its screen
// diffing is only the ~20 lines of ScreenDiff here.
#pragma once

#include <termios.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "cli/signal_pipe.h"
#include "cli/top_view.h"

namespace stackie::cli {

// Raw mode (no echo, no line editing, no signals from keys: Ctrl-C arrives as a byte), the
// alternate screen, the cursor hidden, no autowrap. leave() puts everything back; the
// destructor calls it, so every way out of the verb restores the terminal.
class RawTerminal {
 public:
  RawTerminal() = default;
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  ~RawTerminal() { leave(); }

  Status enter();
  void leave();
  bool active() const { return active_; }
  // The size of the terminal on stdout (80x24 when it does not say).
  static TopSize size();

 private:
  termios saved_{};
  bool active_ = false;
};

// Writes all of `bytes` to stdout (the terminal), retrying short writes.
void write_terminal(std::string_view bytes);

enum class Key {
  character,  // `ch`
  up,
  down,
  page_up,
  page_down,
  home,
  end,
  enter,
  escape,
  backspace,
  interrupt,  // Ctrl-C
};
struct KeyPress {
  Key key;
  char ch = 0;
};

// Bytes from the terminal to keys. A read holds whole sequences in practice (terminals and
// tmux send each key's bytes at once), so an ESC that ends a read is the Escape key itself.
// Unknown sequences are dropped.
std::vector<KeyPress> decode_keys(std::string_view bytes);

}  // namespace stackie::cli
