// The last lines of a block's logs, for `logs --tail`, `status` and failure reasons: bounded by
// a line count and a byte count. The texts live in one byte buffer and each line is a small
// index entry pointing into it, so a flood of short lines costs a copy per line and no
// allocation (a std::string per line was a malloc and a free per line under a flood, issue 25).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/log_level.h"

namespace stackie {

enum class LogStream { out, err, daemon };
std::string_view to_string(LogStream stream);

struct LogLine {
  uint64_t seq = 0;
  int64_t time_ms = 0;  // wall clock, milliseconds since the epoch
  LogStream stream = LogStream::out;
  LogLevel level = LogLevel::unknown;  // what the line announces; unknown for our own notes
  std::string text;                    // without the newline
};

// One line of a read from a block's pipe, as the ring and followers take it: its text is a view,
// valid only while the read is handled.
struct LogBatchLine {
  uint64_t seq;
  LogLevel level;
  std::string_view text;
};

class LineRing {
 public:
  LineRing(size_t max_lines, size_t max_bytes);

  // Keeps `line` (its text is copied), dropping the oldest lines that leave no room for it. A
  // text longer than the whole byte budget empties the ring: no room is left for anything older.
  void push(uint64_t seq, int64_t time_ms, LogStream stream, LogLevel level, std::string_view text);
  // The lines of one read, as if each were pushed in turn: the ring ends exactly as it would
  // then, buffer size included. Cheaper per line: the common case runs in locals, and the texts
  // of lines that the same call pushes out again by their number are never copied (issue 25: a
  // flood's read of 256 KiB has more lines than the ring keeps).
  void push_lines(int64_t time_ms, LogStream stream, std::span<const LogBatchLine> lines);
  size_t size() const { return count_; }
  // Bytes held for the texts (not the index).
  size_t buffer_bytes() const { return capacity_; }
  // The last `lines` lines, oldest first.
  std::vector<LogLine> tail(size_t lines) const;

 private:
  // 32 bytes, two to a cache line: the stream and the level take a byte each (as enums they took
  // four each, 40 bytes in all), and an entry is written field by field in place. Built whole on
  // the stack and copied in, it was where perf put most of push's time under a flood; this way
  // a push costs about 12 ns instead of 17 (issue 25).
  struct Entry {
    uint64_t seq;
    int64_t time_ms;
    uint64_t start;  // position in the endless byte stream; start % capacity_ in bytes_
    uint32_t length;
    uint8_t stream;  // LogStream
    uint8_t level;   // LogLevel
  };
  static_assert(sizeof(Entry) == 32);
  // Index arithmetic without `%`: a division per use was a tenth of the hot path (issue 25).
  size_t slot(size_t i) const {
    size_t at = first_ + i;
    return at >= entries_.size() ? at - entries_.size() : at;
  }
  const Entry& entry(size_t i) const { return entries_[slot(i)]; }
  void drop_oldest();
  // push, with the text copied or only given its place (`copy` false: a line that the batch
  // being pushed drops again before it ends).
  void push_one(uint64_t seq, int64_t time_ms, LogStream stream, LogLevel level,
                std::string_view text, bool copy);
  // Where the lines that can still be in the ring once all of `lines` are pushed begin.
  size_t first_that_can_stay(std::span<const LogBatchLine> lines) const;
  // push_lines from `i` on while nothing but placing, dropping and copying (kCopy) is needed;
  // returns where it stopped (a line that needs push_one: the ring is empty, or must grow or
  // reset).
  template <bool kCopy>
  size_t push_steady(int64_t time_ms, LogStream stream, std::span<const LogBatchLine> lines,
                     size_t i);

  size_t max_lines_;
  size_t max_bytes_;
  // Grown as lines come, up to max_lines_, then used in a circle from first_: a quiet block
  // never pays for 2000 entries.
  std::vector<Entry> entries_;
  size_t first_ = 0;
  size_t count_ = 0;
  // Makes bytes_ twice as large (at most max_bytes_), its lines moved to its start in order.
  void grow_bytes(size_t at_least);

  // Starts at kFirstBytes and doubles, up to max_bytes_, only when lines would otherwise leave
  // for want of bytes: 2000 lines of 100 bytes live in 256 KiB, and a flood then writes over
  // that much memory again and again, not over the whole 1 MiB the budget allows (which cost
  // RSS and cache misses, issue 25). Small at first: most blocks say little beyond the daemon's
  // own notes about them, and at 500 blocks a 4 KiB start was 2 MiB of the daemon's RSS
  // (bench/scale). A block that talks doubles its way up in a few lines.
  static constexpr size_t kFirstBytes = 512;
  std::unique_ptr<char[]> bytes_;
  size_t capacity_ = 0;
  // Where the next text goes in the endless stream. A text never straddles the end of bytes_:
  // it starts over at the next lap, and the unused end counts as taken until the lap is over.
  uint64_t end_ = 0;
  size_t end_offset_ = 0;  // end_ % capacity_, kept rather than divided for
};

}  // namespace stackie
