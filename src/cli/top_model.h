// What `stackie top` knows about one stack: its blocks (from the daemon's `ps` rows and `stats`
// documents), the recent log lines of every block, which block is selected, and what the log
// pane shows (the selected block or all of them, a filter, how far scrolled back). Pure: the
// verb feeds it the daemon's messages and the keys, the view draws it; tests need neither a
// daemon nor a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"

namespace stackie::cli {

struct TopBlock {
  std::string name;
  std::string state = "?";
  std::string health = "-";
  std::optional<int64_t> pid;
  std::optional<int64_t> uptime_s;
  int64_t restarts = 0;
  std::string ports;  // "127.0.0.1:5433->5432,..." (format_ports)
  std::optional<double> cpu_percent;
  std::optional<int64_t> memory_bytes;
};

struct TopLogLine {
  std::string block;
  std::string stream;  // stdout, stderr, stackie
  std::string level;   // the daemon's reading: warn, error, fatal...; empty when none
  std::string text;
};

class TopModel {
 public:
  // The log lines kept for the pane (all blocks together): what a screen can scroll back over,
  // bounded so that a chatty block cannot grow the client.
  static constexpr size_t kMaxLogLines = 5000;

  explicit TopModel(std::string stack) : stack_(std::move(stack)) {}

  const std::string& stack() const { return stack_; }
  const std::vector<TopBlock>& blocks() const { return blocks_; }

  // A `ps` result: the rows of our stack, in the daemon's (start) order. Keeps the selection
  // on the same block by name, and each block's last stats.
  void apply_ps(const Json& document);
  // A `stats` document: CPU and memory per block (and state and uptime, which are fresher).
  void apply_stats(const Json& document);
  // A `logs` "line" event.
  void add_log(const Json& line);
  // Lines the daemon dropped for us (a slow reader): said in the pane.
  void add_skipped(int64_t count);

  // Selection: by name, so that a refresh that reorders rows keeps it.
  void move_selection(int delta);
  const TopBlock* selected() const;
  size_t selected_index() const;

  // The log pane: the selected block only, or every block interleaved.
  bool follow_all() const { return follow_all_; }
  void toggle_follow_all() {
    follow_all_ = !follow_all_;
    scroll_ = 0;
  }
  // A substring that lines must contain (empty: every line).
  const std::string& filter() const { return filter_; }
  void set_filter(std::string filter) {
    filter_ = std::move(filter);
    scroll_ = 0;
  }
  // Lines back from the newest (0 = following).
  size_t scroll() const { return scroll_; }
  void scroll_by(long delta);

  // The `rows` lines the pane shows now, oldest first: those of the block(s) followed that
  // pass the filter, ending `scroll()` lines before the newest.
  std::vector<const TopLogLine*> visible_logs(size_t rows) const;
  // A stable colour slot for a block: its position in the stack.
  size_t color_slot(const std::string& block) const;

  // One line for the status bar (the last action's outcome); empty when none.
  const std::string& status() const { return status_; }
  void set_status(std::string text) { status_ = std::move(text); }

 private:
  bool shows(const TopLogLine& line) const;
  TopBlock* find(const std::string& name);

  std::string stack_;
  std::vector<TopBlock> blocks_;
  std::string selected_;  // a block name; empty before the first ps
  std::deque<TopLogLine> logs_;
  bool follow_all_ = true;
  std::string filter_;
  size_t scroll_ = 0;
  std::string status_;
};

}  // namespace stackie::cli
