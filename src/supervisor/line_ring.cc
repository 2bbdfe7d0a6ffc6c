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
  push_one(seq, time_ms, stream, level, text, true);
}

void LineRing::push_one(uint64_t seq, int64_t time_ms, LogStream stream, LogLevel level,
                        std::string_view text, bool copy) {
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
  if (copy && !text.empty()) std::memcpy(bytes_.get() + offset, text.data(), text.size());
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

void LineRing::push_lines(int64_t time_ms, LogStream stream, std::span<const LogBatchLine> lines) {
  if (max_lines_ == 0) return;
  const size_t copied_from = first_that_can_stay(lines);
  size_t i = 0;
  while (i < lines.size()) {
    const bool copy = i >= copied_from;
    const size_t until = copy ? lines.size() : copied_from;
    i = copy ? push_steady<true>(time_ms, stream, lines.first(until), i)
             : push_steady<false>(time_ms, stream, lines.first(until), i);
    if (i == until) continue;
    const LogBatchLine& line = lines[i];
    push_one(line.seq, time_ms, stream, line.level, line.text, copy);
    ++i;
  }
}

// After every push at most max_lines_ lines are kept: a line with max_lines_ or more lines after
// it in the same call is gone once they are pushed. (Bytes bound what is kept too, but finding
// the lines they push out means a pass over the lines that cost about what it saved.) Such a
// line is still placed and counted while the lines after it come, so that the ring's layout,
// and with it everything it keeps and how large its buffer grows, stays that of one push per
// line; only its text is not copied (the buffer may then copy bytes that mean nothing while it
// grows, for lines that leave before anyone can look).
size_t LineRing::first_that_can_stay(std::span<const LogBatchLine> lines) const {
  return lines.size() > max_lines_ ? lines.size() - max_lines_ : 0;
}

// push_one's path for a ring that holds lines and has room for the next in its buffer and its
// index, with the ring's state in locals rather than reloaded from the members after each copy
// (issue 25: a push cost about 130 instructions, most of them on that).
template <bool kCopy>
size_t LineRing::push_steady(int64_t time_ms, LogStream stream, std::span<const LogBatchLine> lines,
                             size_t i) {
  if (!bytes_ || count_ == 0 || capacity_ > UINT32_MAX) return i;
  size_t first = first_, count = count_;
  uint64_t end = end_;
  size_t end_offset = end_offset_;
  const size_t capacity = capacity_;
  const size_t max_lines = max_lines_;
  const size_t slots = entries_.size();
  // The index grows (push_one) when every entry is in use and more lines may be kept.
  const size_t index_full = slots < max_lines ? slots : SIZE_MAX;
  Entry* const entries = entries_.data();
  char* const bytes = bytes_.get();
  const bool can_grow = capacity < max_bytes_;
  for (; i < lines.size(); ++i) {
    const LogBatchLine& line = lines[i];
    const size_t size = line.text.size();
    // What push_one does otherwise: grow the buffer or the index, start a fresh lap, reset.
    if (size > capacity || count == 0 || count == index_full) break;
    uint64_t start = end;
    size_t offset = end_offset;
    if (offset + size > capacity) {  // the next lap
      start += capacity - offset;
      offset = 0;
    }
    if (start + size - entries[first].start > capacity) {
      if (can_grow) break;  // crowded: push_one grows the buffer
      do {
        if (++first == slots) first = 0;
        --count;
      } while (count > 0 && start + size - entries[first].start > capacity);
    }
    if (count == max_lines) {
      if (++first == slots) first = 0;
      --count;
    }
    if (count == 0) first = 0;
    const size_t at = first + count;
    Entry& added = entries[at >= slots ? at - slots : at];
    added.seq = line.seq;
    added.time_ms = time_ms;
    added.start = start;
    added.length = static_cast<uint32_t>(size);
    added.stream = static_cast<uint8_t>(stream);
    added.level = static_cast<uint8_t>(line.level);
    ++count;
    end = start + size;
    end_offset = offset + size;
    // Last, so that little is left to keep across the call.
    if (kCopy && size > 0) std::memcpy(bytes + offset, line.text.data(), size);
  }
  first_ = first;
  count_ = count;
  end_ = end;
  end_offset_ = end_offset;
  return i;
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
