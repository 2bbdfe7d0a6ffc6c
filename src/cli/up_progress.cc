#include "cli/up_progress.h"

#include <algorithm>
#include <cstdio>

namespace stackie::cli {

namespace {

// The first line of a message (a failure reason may carry the log tail on later lines).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

bool settles(const std::string& state) {
  return state == "running" || state == "failed" || state == "stopped";
}

const char* color_of(const std::string& state) {
  if (state == "running") return "32";                                                // green
  if (state == "failed") return "31";                                                 // red
  if (state == "starting" || state == "backoff" || state == "stopping") return "33";  // yellow
  return "2";  // dim: waiting
}

}  // namespace

std::string UpProgressView::format_elapsed(int64_t ms) {
  char buffer[32];
  if (ms < 0) ms = 0;
  if (ms < 60'000)
    std::snprintf(buffer, sizeof buffer, "%lld.%llds", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000 / 100));
  else if (ms < 3'600'000)
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms % 60'000 / 1000));
  else
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>(ms % 3'600'000 / 60'000));
  return buffer;
}

UpProgressView::Row& UpProgressView::row(const std::string& name) {
  for (auto& r : rows_)
    if (r.name == name) return r;
  rows_.emplace_back();
  rows_.back().name = name;
  return rows_.back();
}

void UpProgressView::plan(const Json& blocks, int64_t now_ms) {
  if (!blocks.is_array()) return;
  planned_ = true;
  std::vector<Row> ordered;
  for (const auto& block : blocks.as_array()) {
    std::string name = block["name"].string_or("?");
    auto known =
        std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) { return r.name == name; });
    if (known != rows_.end()) {
      ordered.push_back(std::move(*known));
      rows_.erase(known);
      continue;
    }
    Row r;
    r.name = name;
    r.state = block["state"].string_or("created");
    r.health = block["health"].string_or("-");
    r.message = first_line(block["message"].string_or(""));
    if (block["uptime_s"].is_int()) r.uptime_s = block["uptime_s"].as_int();
    if (r.state == "starting") r.started_ms = now_ms;
    ordered.push_back(std::move(r));
  }
  for (auto& rest : rows_) ordered.push_back(std::move(rest));  // not in the plan: keep them
  rows_ = std::move(ordered);
}

void UpProgressView::progress(const Json& data, int64_t now_ms) {
  Row& r = row(data["block"].string_or("?"));
  std::string state = data["state"].string_or("?");
  std::string message = data["message"].string_or("");
  std::string health = data["health"].string_or(r.health);
  bool changed = state != r.state || message != r.message;
  if (state == "starting" && (r.state != "starting" || !r.started_ms)) {
    r.started_ms = now_ms;
    r.settled_ms.reset();
    r.uptime_s.reset();
  }
  if (settles(state) && !settles(r.state)) r.settled_ms = now_ms;
  r.state = state;
  r.health = health;
  r.message = message;
  if (changed) pending_.push_back(r.name + ": " + state + (message.empty() ? "" : " - " + message));
}

std::string UpProgressView::live_line(const Row& r, size_t name_width, int64_t now_ms) const {
  std::string elapsed = "-";
  if (r.started_ms)
    elapsed = format_elapsed(r.settled_ms.value_or(now_ms) - *r.started_ms);
  else if (r.uptime_s)
    elapsed = "up " + (*r.uptime_s < 60 ? std::to_string(*r.uptime_s) + "s"
                                        : format_elapsed(*r.uptime_s * 1000));
  // A block not started yet has no health to speak of (the daemon says "unhealthy").
  bool waiting = r.state == "created";
  std::string state = waiting ? "waiting" : r.state;
  std::string health = waiting ? "-" : r.health;
  char head[256];
  std::snprintf(head, sizeof head, "%-*.*s  %-8s  %-9s  %7s", static_cast<int>(name_width),
                static_cast<int>(name_width), r.name.c_str(), state.c_str(), health.c_str(),
                elapsed.c_str());
  std::string line = head;
  std::string message = first_line(r.message);
  if (!message.empty()) line += "  " + message;
  // Never wrap: a wrapped line would make the cursor movement of the next redraw miss.
  size_t width = static_cast<size_t>(std::max(options_.width - 1, 20));
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  if (!options_.color || line.size() < name_width + 2 + state.size()) return line;
  size_t at = name_width + 2;  // colour the state word only
  return line.substr(0, at) + "\033[" + color_of(r.state) + "m" + line.substr(at, state.size()) +
         "\033[0m" + line.substr(at + state.size());
}

std::string UpProgressView::render(int64_t now_ms, bool final) {
  std::string out;
  // The cursor cannot move back over lines scrolled off the top of the screen.
  bool fits = rows_.size() < static_cast<size_t>(std::max(options_.height, 2));
  if (!options_.live || (!fits && drawn_lines_ == 0)) {
    for (const auto& line : pending_) out += line + "\n";
    pending_.clear();
    return out;
  }
  if (!planned_ && !final) return out;  // the whole table once its size is known
  size_t name_width = 4;
  for (const auto& r : rows_) name_width = std::max(name_width, r.name.size());
  name_width = std::min<size_t>(name_width, 32);
  pending_.clear();
  if (drawn_lines_ > 0) out += "\033[" + std::to_string(drawn_lines_) + "A";  // back to the top
  for (const auto& r : rows_) out += "\r\033[2K" + live_line(r, name_width, now_ms) + "\n";
  drawn_lines_ = rows_.size();
  return out;
}

}  // namespace stackie::cli
