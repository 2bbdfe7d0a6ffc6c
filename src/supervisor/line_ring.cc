#include "supervisor/line_ring.h"

#include <algorithm>
#include <cstring>

namespace stackie {

std::string_view to_string(LogStream stream) {
  switch (stream) {
    case LogStream::out: return "stdout";
    case LogStream::err: return "stderr";
    case LogStream::daemon: return "stackie";
  }
  return "?";
}

LineRing::LineRing(size_t max_lines, size_t max_bytes)
    : max_lines_(max_lines), max_bytes_(max_bytes) {}

void LineRing::drop_oldest() {
  if (++first_ == entries_.size()) first_ = 0;
  --count_;
}

void LineRing::push(uint64_t seq, int64_t time_ms, LogStream stream, LogLevel level,
                    std::string_view text) {
  if (max_lines_ == 0) return;
  if (text.size() > max_bytes_ || text.size() > UINT32_MAX) {
    count_ = 0;
    first_ = 0;
    return;
  }
  if (count_ == 0) end_ = end_offset_ = 0;  // nothing to keep: the next text starts a fresh lap
  if (capacity_ < text.size() || (!bytes_ && max_bytes_ > 0)) grow_bytes(text.size());
  uint64_t start = end_;
  size_t offset = end_offset_;
  for (;;) {
    start = end_;
    offset = end_offset_;
    if (offset + text.size() > capacity_) {  // the next lap
      start += capacity_ - offset;
      offset = 0;
    }
    bool crowded = count_ > 0 && start + text.size() - entry(0).start > capacity_;
    if (!crowded || capacity_ >= max_bytes_) break;
    grow_bytes(capacity_ * 2);
  }
  // The oldest lines whose bytes the new text would overwrite leave first, then the oldest
  // beyond the line count.
  while (count_ > 0 && start + text.size() - entry(0).start > capacity_) drop_oldest();
  if (count_ == max_lines_) drop_oldest();
  if (count_ == 0) first_ = 0;
  if (!text.empty()) std::memcpy(bytes_.get() + offset, text.data(), text.size());
  end_ = start + text.size();
  end_offset_ = offset + text.size();
  if (count_ == entries_.size()) {  // every entry in use, below max_lines_: one more
    std::rotate(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(first_),
                entries_.end());
    first_ = 0;
    entries_.emplace_back();
  }
  Entry& added = entries_[slot(count_)];
  added.seq = seq;
  added.time_ms = time_ms;
  added.start = start;
  added.length = static_cast<uint32_t>(text.size());
  added.stream = static_cast<uint8_t>(stream);
  added.level = static_cast<uint8_t>(level);
  ++count_;
}

void LineRing::grow_bytes(size_t at_least) {
  size_t capacity = std::max(capacity_, std::min(kFirstBytes, max_bytes_));
  while (capacity < at_least && capacity < max_bytes_) capacity *= 2;
  capacity = std::min(std::max(capacity, at_least), max_bytes_);
  if (capacity == capacity_ && bytes_) return;
  std::unique_ptr<char[]> bytes(new char[capacity]);
  uint64_t end = 0;
  for (size_t i = 0; i < count_; ++i) {
    Entry& e = entries_[slot(i)];
    if (e.length > 0) std::memcpy(bytes.get() + end, bytes_.get() + e.start % capacity_, e.length);
    e.start = end;
    end += e.length;
  }
  bytes_ = std::move(bytes);
  capacity_ = capacity;
  end_ = end;
  end_offset_ = static_cast<size_t>(end);
}

std::vector<LogLine> LineRing::tail(size_t lines) const {
  size_t n = std::min(lines, count_);
  std::vector<LogLine> out;
  out.reserve(n);
  for (size_t i = count_ - n; i < count_; ++i) {
    const Entry& e = entry(i);
    const char* text = e.length == 0 ? "" : bytes_.get() + e.start % capacity_;
    out.push_back(LogLine{e.seq, e.time_ms, static_cast<LogStream>(e.stream),
                          static_cast<LogLevel>(e.level), std::string(text, e.length)});
  }
  return out;
}

}  // namespace stackie
