// What `stackie top` draws: the model laid out as screen rows (layout), and the escape
// sequences that bring a terminal from the rows it shows to new ones, rewriting only the rows
// that changed (ScreenDiff). Plain VT100/xterm sequences (cursor position, erase, SGR), which
// every terminal and terminal multiplexer reached over SSH understands. Pure: tests compare
// rows and sequences without a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cli/top_model.h"

namespace stackie::cli {

struct TopSize {
  int width = 80;
  int height = 24;
};
// Below this the table and a useful log pane do not fit: the screen says so instead.
constexpr TopSize kTopMinimum{50, 10};

struct TopViewOptions {
  bool color = true;            // false under NO_COLOR: no colours (reverse video stays)
  bool editing_filter = false;  // the bottom row is the filter being typed
  std::string filter_draft;     // what has been typed so far
};

// The screen as `size.height` rows, each exactly `size.width` columns wide once its SGR
// sequences are left out. Text from blocks (log lines) has its control characters replaced:
// a block must not be able to drive the terminal of whoever looks at its logs.
std::vector<std::string> top_layout(const TopModel& model, TopSize size,
                                    const TopViewOptions& options);

// The rows a terminal shows, and the bytes that update it.
class ScreenDiff {
 public:
  // The sequences that turn the screen shown into `rows`: every row when the size changed or
  // after invalidate() (clearing first), else only the rows that differ.
  std::string update(const std::vector<std::string>& rows);
  // The next update redraws everything (after a resize, or when something else wrote to the
  // terminal: the shell of `e`).
  void invalidate() { shown_.clear(); }

 private:
  std::vector<std::string> shown_;
};

}  // namespace stackie::cli
