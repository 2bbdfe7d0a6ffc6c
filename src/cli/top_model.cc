#include "cli/top_model.h"

#include <algorithm>

#include "cli/cli_args.h"

namespace stackie::cli {

namespace {

std::optional<int64_t> int_of(const Json& value) {
  if (value.is_int()) return value.as_int();
  return std::nullopt;
}

}  // namespace

TopBlock* TopModel::find(const std::string& name) {
  for (auto& block : blocks_)
    if (block.name == name) return &block;
  return nullptr;
}

void TopModel::apply_ps(const Json& document) {
  const Json& rows = document["blocks"];
  if (!rows.is_array()) return;
  std::vector<TopBlock> fresh;
  for (const auto& row : rows.as_array()) {
    if (row["stack"].string_or(stack_) != stack_) continue;
    TopBlock block;
    block.name = row["name"].string_or("?");
    if (const TopBlock* known = find(block.name)) {  // keep the last sample until the next
      block.cpu_percent = known->cpu_percent;
      block.memory_bytes = known->memory_bytes;
    }
    block.state = row["state"].string_or("?");
    block.health = row["health"].string_or("-");
    block.pid = int_of(row["pid"]);
    block.uptime_s = int_of(row["uptime_s"]);
    block.restarts = row["restarts"].int_or(0);
    block.ports = format_ports(row["ports"]);
    if (block.state != "running") {  // a sample of a process that is gone says nothing now
      block.cpu_percent.reset();
      block.memory_bytes.reset();
    }
    fresh.push_back(std::move(block));
  }
  blocks_ = std::move(fresh);
  bool selection_kept = std::any_of(blocks_.begin(), blocks_.end(),
                                    [&](const TopBlock& b) { return b.name == selected_; });
  if (!selection_kept) selected_ = blocks_.empty() ? "" : blocks_.front().name;
}

void TopModel::apply_stats(const Json& document) {
  const Json& rows = document["blocks"];
  if (!rows.is_array()) return;
  for (const auto& row : rows.as_array()) {
    if (row["stack"].string_or(stack_) != stack_) continue;
    TopBlock* block = find(row["name"].string_or(""));
    if (block == nullptr) continue;  // the next ps brings it
    block->cpu_percent.reset();
    if (row["cpu_percent"].is_number()) block->cpu_percent = row["cpu_percent"].as_double();
    block->memory_bytes = int_of(row["memory_bytes"]);
    if (row["state"].is_string()) block->state = row["state"].as_string();
    block->uptime_s = int_of(row["uptime_s"]);
  }
}

void TopModel::add_log(const Json& line) {
  if (line["stack"].string_or(stack_) != stack_) return;
  logs_.push_back(TopLogLine{line["block"].string_or("?"), line["stream"].string_or("stdout"),
                             line["level"].string_or(""), line["text"].string_or("")});
  if (logs_.size() > kMaxLogLines) logs_.pop_front();
  // Scrolled back, the view stays on the same lines while new ones arrive below.
  if (scroll_ > 0 && shows(logs_.back())) ++scroll_;
}

void TopModel::add_skipped(int64_t count) {
  logs_.push_back(TopLogLine{"", "stackie", "",
                             std::to_string(count) + " lines skipped (this screen fell behind)"});
  if (logs_.size() > kMaxLogLines) logs_.pop_front();
}

void TopModel::move_selection(int delta) {
  if (blocks_.empty()) return;
  long at = static_cast<long>(selected_index()) + delta;
  at = std::clamp(at, 0L, static_cast<long>(blocks_.size()) - 1);
  if (blocks_[static_cast<size_t>(at)].name != selected_ && !follow_all_) scroll_ = 0;
  selected_ = blocks_[static_cast<size_t>(at)].name;
}

size_t TopModel::selected_index() const {
  for (size_t i = 0; i < blocks_.size(); ++i)
    if (blocks_[i].name == selected_) return i;
  return 0;
}

const TopBlock* TopModel::selected() const {
  if (blocks_.empty()) return nullptr;
  return &blocks_[selected_index()];
}

bool TopModel::shows(const TopLogLine& line) const {
  // The daemon's notes about no block in particular (skipped lines) go to every view.
  if (!follow_all_ && !line.block.empty() && line.block != selected_) return false;
  return filter_.empty() || line.text.find(filter_) != std::string::npos ||
         line.block.find(filter_) != std::string::npos;
}

void TopModel::scroll_by(long delta) {
  long shown = std::count_if(logs_.begin(), logs_.end(),
                             [this](const TopLogLine& line) { return shows(line); });
  long next = std::clamp(static_cast<long>(scroll_) + delta, 0L, std::max(shown - 1, 0L));
  scroll_ = static_cast<size_t>(next);
}

std::vector<const TopLogLine*> TopModel::visible_logs(size_t rows) const {
  std::vector<const TopLogLine*> out;
  if (rows == 0) return out;
  size_t skip = scroll_;
  for (auto it = logs_.rbegin(); it != logs_.rend() && out.size() < rows; ++it) {
    if (!shows(*it)) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    out.push_back(&*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

size_t TopModel::color_slot(const std::string& block) const {
  for (size_t i = 0; i < blocks_.size(); ++i)
    if (blocks_[i].name == block) return i;
  return blocks_.size();
}

}  // namespace stackie::cli
