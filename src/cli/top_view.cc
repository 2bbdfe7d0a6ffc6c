#include "cli/top_view.h"

#include <algorithm>
#include <cstdio>

#include "cli/cli_args.h"
#include "cli/terminal_text.h"

namespace stackie::cli {

namespace {

// A screen row assembled from cells, each cut or padded to its width and optionally wrapped in
// one SGR sequence; the row never exceeds its width.
class RowBuilder {
 public:
  RowBuilder(size_t width, bool color) : left_(width), color_(color) {}
  // `sgr` is applied only with colour; `always` even without (reverse video, bold).
  void add(std::string_view text, size_t width, const char* sgr = nullptr, bool always = false) {
    width = std::min(width, left_);
    if (width == 0) return;
    bool styled = sgr != nullptr && (color_ || always);
    if (styled) out_ += std::string("\033[") + sgr + "m";
    out_ += fit(text, width);
    if (styled) out_ += "\033[0m";
    left_ -= width;
  }
  void rest(std::string_view text, const char* sgr = nullptr, bool always = false) {
    add(text, left_, sgr, always);
  }
  std::string done() {
    rest("");
    return std::move(out_);
  }

 private:
  std::string out_;
  size_t left_;
  bool color_;
};

const char* state_color(const std::string& state) {
  if (state == "running") return "32";
  if (state == "failed") return "31";
  if (state == "starting" || state == "backoff" || state == "stopping") return "33";
  return "2";
}

// The palette of `stackie logs`: a block keeps its colour in both.
const char* block_color(size_t slot) {
  static const char* kColors[] = {"36", "33", "32", "35", "34", "31"};
  return kColors[slot % 6];
}

// A line's colour by the severity the daemon read in it (red for error and fatal, yellow for
// warn); stackie's own notes dim.
const char* text_color(const TopLogLine& line) {
  if (line.level == "error" || line.level == "fatal") return "31";
  if (line.level == "warn") return "33";
  return line.stream == "stackie" ? "2" : nullptr;
}

std::string cpu_text(const TopBlock& block) {
  if (!block.cpu_percent) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f", *block.cpu_percent);
  return text;
}

std::string optional_text(const std::optional<int64_t>& value) {
  return value ? std::to_string(*value) : "-";
}

struct Columns {
  size_t name;
};
constexpr size_t kMarker = 2, kState = 10, kHealth = 10, kPid = 8, kRestarts = 5, kCpu = 7,
                 kMem = 10, kUptime = 8;

std::string heading_row(const Columns& columns, size_t width, bool color) {
  RowBuilder row(width, color);
  row.add("", kMarker);
  row.add("NAME", columns.name + 1);
  row.add("STATE", kState);
  row.add("HEALTH", kHealth);
  row.add("PID", kPid);
  row.add("RST", kRestarts);
  row.add("CPU%", kCpu);
  row.add("MEM", kMem);
  row.add("UPTIME", kUptime);
  row.rest("PORTS");
  return "\033[1m" + row.done() + "\033[0m";
}

std::string block_row(const TopBlock& block, const Columns& columns, size_t width, bool color,
                      bool selected) {
  RowBuilder row(width, color && !selected);
  row.add(selected ? ">" : "", kMarker);
  row.add(terminal_safe(block.name), columns.name + 1);
  row.add(block.state, kState, state_color(block.state));
  row.add(block.health, kHealth);
  row.add(optional_text(block.pid), kPid);
  row.add(std::to_string(block.restarts), kRestarts);
  row.add(cpu_text(block), kCpu);
  row.add(block.memory_bytes ? format_bytes(static_cast<uint64_t>(*block.memory_bytes)) : "-",
          kMem);
  row.add(format_uptime(block.uptime_s ? Json(*block.uptime_s) : Json()), kUptime);
  row.rest(block.ports.empty() ? "-" : block.ports);
  std::string text = row.done();
  // The selected row in reverse video: seen without colour too (NO_COLOR), and by the ">".
  return selected ? "\033[7m" + text + "\033[0m" : text;
}

std::string log_row(const TopLogLine& line, const TopModel& model, size_t name_width, size_t width,
                    bool color) {
  RowBuilder row(width, color);
  if (model.follow_all()) {
    row.add(terminal_safe(line.block.empty() ? "stackie" : line.block), name_width,
            block_color(model.color_slot(line.block)));
    row.add("| ", 2, "2");
  }
  row.rest(terminal_safe(line.text), text_color(line));
  return row.done();
}

std::string pane_title(const TopModel& model) {
  std::string title = "-- logs: ";
  const TopBlock* selected = model.selected();
  title += model.follow_all() ? std::string("every block")
                              : terminal_safe(selected ? selected->name : "-");
  if (!model.filter().empty()) title += ", lines with \"" + terminal_safe(model.filter()) + "\"";
  if (model.scroll() > 0)
    title += ", " + std::to_string(model.scroll()) + " lines back (End follows)";
  return title + " ";
}

// The most needed first: a narrow terminal cuts the end.
const char kKeys[] =
    "q quit  up/down select  a one/all logs  r restart  x stop  s start  e shell  / filter  "
    "PgUp/PgDn scroll";

}  // namespace

std::vector<std::string> top_layout(const TopModel& model, TopSize size,
                                    const TopViewOptions& options) {
  const size_t width = static_cast<size_t>(std::max(size.width, 1));
  const size_t height = static_cast<size_t>(std::max(size.height, 1));
  std::vector<std::string> rows;
  auto plain = [&](std::string_view text) {
    RowBuilder row(width, options.color);
    row.rest(text);
    rows.push_back(row.done());
  };
  if (size.width < kTopMinimum.width || size.height < kTopMinimum.height) {
    // Short lines: the terminal may be very narrow.
    plain("terminal too small: " + std::to_string(size.width) + "x" + std::to_string(size.height));
    plain("stackie top needs " + std::to_string(kTopMinimum.width) + "x" +
          std::to_string(kTopMinimum.height));
    plain("q quits");
    while (rows.size() < height) plain("");
    return rows;
  }

  const auto& blocks = model.blocks();
  std::string header = "stackie top - stack " + terminal_safe(model.stack()) + " - " +
                       std::to_string(blocks.size()) + (blocks.size() == 1 ? " block" : " blocks");
  rows.push_back("\033[1m" + fit(header, width) + "\033[0m");

  Columns columns{4};
  for (const auto& block : blocks)
    columns.name = std::max(columns.name, display_width(terminal_safe(block.name)));
  columns.name = std::min<size_t>(columns.name, 24);
  rows.push_back(heading_row(columns, width, options.color));

  // The table takes up to half of what is left after the four fixed rows (header, headings,
  // pane title, footer); with more blocks than that, it scrolls to keep the selection shown.
  const size_t fixed = 4;
  size_t table_rows = std::min(blocks.size(), std::max<size_t>(1, (height - fixed) / 2));
  size_t first = 0;
  if (model.selected_index() >= table_rows) first = model.selected_index() + 1 - table_rows;
  for (size_t i = first; i < first + table_rows; ++i) {
    if (i < blocks.size())
      rows.push_back(
          block_row(blocks[i], columns, width, options.color, i == model.selected_index()));
    else
      plain("");
  }
  if (blocks.empty()) plain("  (the daemon knows no block of this stack)");

  std::string title = pane_title(model);
  if (display_width(title) < width) title.append(width - display_width(title), '-');
  rows.push_back("\033[2m" + fit(title, width) + "\033[0m");

  size_t log_rows = height - rows.size() - 1;
  size_t name_width = 4;
  for (const auto& block : blocks)
    name_width = std::max(name_width, display_width(terminal_safe(block.name)));
  name_width = std::min<size_t>(name_width, 20) + 1;
  for (const TopLogLine* line : model.visible_logs(log_rows))
    rows.push_back(log_row(*line, model, name_width, width, options.color));
  while (rows.size() < height - 1) plain("");

  if (options.editing_filter)
    plain("filter: " + terminal_safe(options.filter_draft) + "_   (Enter applies, Esc clears)");
  else if (!model.status().empty())
    plain(terminal_safe(model.status()));
  else {
    RowBuilder row(width, options.color);
    row.rest(kKeys, "2");
    rows.push_back(row.done());
  }
  return rows;
}

std::string ScreenDiff::update(const std::vector<std::string>& rows) {
  std::string out;
  bool all = rows.size() != shown_.size();
  if (all) out += "\033[H\033[2J";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!all && rows[i] == shown_[i]) continue;
    out += "\033[" + std::to_string(i + 1) + ";1H" + rows[i];
  }
  shown_ = rows;
  return out;
}

}  // namespace stackie::cli
