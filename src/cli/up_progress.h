// What `stackie up` shows while it waits: on a terminal, one status line per block (name,
// state, health, elapsed, message) redrawn in place with ANSI cursor movement; otherwise one
// plain line per change. Pure: it turns the daemon's events and a clock into text, so the
// tests check the frames without a terminal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"

namespace stackie::cli {

class UpProgressView {
 public:
  struct Options {
    bool live = false;   // redraw in place (a terminal that takes ANSI sequences)
    bool color = false;  // colour the state column
    int width = 80;      // terminal columns: a live line never wraps (that would break redraw)
    int height = 24;     // terminal rows: a table taller than the screen is printed plain
  };
  explicit UpProgressView(Options options) : options_(options) {}

  // The daemon's `stack` event: every block in start order (PS_ROWs).
  void plan(const Json& blocks, int64_t now_ms);
  // A `progress` event: {block, state, health, message}.
  void progress(const Json& data, int64_t now_ms);
  // Text to write now. Live: the whole table, moving the cursor back over the previous one
  // first; plain: the change lines not written yet.
  // Live frames wait for plan() (so that the table's height is known before it is drawn),
  // unless `final`: the last frame after the daemon's reply.
  std::string render(int64_t now_ms, bool final = false);
  // Whether anything is on screen (live) that a final render should refresh.
  bool drawn() const { return drawn_lines_ > 0; }
  bool live() const { return options_.live; }

  // "0.4s", "12.3s", "1m05s", "2h03m".
  static std::string format_elapsed(int64_t ms);

 private:
  struct Row {
    std::string name;
    std::string state = "created";
    std::string health = "-";
    std::string message;
    std::optional<int64_t> started_ms;  // when it entered `starting` in this up
    std::optional<int64_t> settled_ms;  // when it reached a state it stays in
    std::optional<int64_t> uptime_s;    // a block already running before this up
  };
  Row& row(const std::string& name);
  std::string live_line(const Row& row, size_t name_width, int64_t now_ms) const;

  Options options_;
  std::vector<Row> rows_;
  std::vector<std::string> pending_;  // plain mode: lines to print
  size_t drawn_lines_ = 0;
  bool planned_ = false;
};

}  // namespace stackie::cli
