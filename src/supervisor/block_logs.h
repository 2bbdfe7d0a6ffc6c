// A block's logs (DESIGN.md §7): every line timestamped, written to
// <logs>/<sandbox-id>/{stdout,stderr}.log with size-based rotation (log_files.h), kept in a
// bounded ring for `logs --tail`, and offered to followers that outlive restarts of the block.
// Nothing here can block: files are appended with O_APPEND writes, followers that cannot take
// a line skip it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/log_level.h"
#include "supervisor/append_buffer.h"
#include "supervisor/line_ring.h"
#include "supervisor/log_files.h"

namespace stackie {

// "2026-12-01T21:35:00.123Z"
std::string format_timestamp(int64_t time_ms);

// format_timestamp for a stream of lines, most of which share their millisecond with the line
// before: formatted once per millisecond, not once per line.
class TimestampText {
 public:
  const std::string& of(int64_t time_ms);

 private:
  int64_t time_ms_ = -1;
  std::string text_;
};

struct LogSettings {
  uint64_t file_max_bytes = 10 * 1024 * 1024;  // rotate when the live file would exceed this
  int file_count = 5;                          // files kept per stream, the live one included
  size_t ring_lines = 2000;
  size_t ring_bytes = 1024 * 1024;
  size_t max_line = 16 * 1024;            // longer lines are split into pieces of this size
  ReleaseRotatedOut release_rotated_out;  // log_files.h; empty: removed on the spot
};

// Cuts a byte stream into lines; a line longer than `max_line` is emitted in pieces. `emit` is
// called with each line (a view into `data` or into the unfinished line kept from the last
// feed); a template rather than a std::function, so that the per-line call is inlined into the
// scan of a whole read (issue 25).
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line) : max_line_(max_line) {}
  template <class Emit>
  void feed(std::string_view data, Emit&& emit);
  template <class Emit>
  void flush(Emit&& emit);  // at EOF: the unfinished line

 private:
  // The slow path: a line that began in an earlier read, follows a split piece or is too long.
  template <class Emit>
  void take_piece(std::string_view piece, bool ends_line, Emit& emit);

  size_t max_line_;
  std::string pending_;
  bool just_split_ = false;
};

template <class Emit>
void LineSplitter::feed(std::string_view data, Emit&& emit) {
  const char* at = data.data();
  const char* end = at + data.size();
  while (at < end) {
    const auto* newline = static_cast<const char*>(std::memchr(at, '\n', size_t(end - at)));
    size_t length = size_t((newline != nullptr ? newline : end) - at);
    // A whole line in this read and nothing pending (the common case): no copy.
    if (newline != nullptr && pending_.empty() && !just_split_ && length <= max_line_) {
      emit(std::string_view(at, length));
    } else {
      take_piece(std::string_view(at, length), newline != nullptr, emit);
    }
    if (newline == nullptr) return;
    at = newline + 1;
  }
}

template <class Emit>
void LineSplitter::take_piece(std::string_view piece, bool ends_line, Emit& emit) {
  // Overlong lines: emit full pieces of max_line as they fill, never hold more than that.
  while (!piece.empty()) {
    size_t take = std::min(piece.size(), max_line_ - pending_.size());
    pending_.append(piece.substr(0, take));
    piece.remove_prefix(take);
    just_split_ = false;
    if (pending_.size() == max_line_) {
      emit(std::string_view(pending_));
      pending_.clear();
      just_split_ = true;
    }
  }
  if (!ends_line) return;
  // A newline right after a split piece ends that piece; it is not an extra empty line.
  if (!just_split_) emit(std::string_view(pending_));
  pending_.clear();
  just_split_ = false;
}

template <class Emit>
void LineSplitter::flush(Emit&& emit) {
  if (!pending_.empty()) emit(std::string_view(pending_));
  pending_.clear();
  just_split_ = false;
}

// The lines of one read from a block's pipe: one stream, one time (the read's).
struct LogBatch {
  int64_t time_ms;
  LogStream stream;
  std::span<const LogBatchLine> lines;
};

// How many lines of one read announce each level, indexed by LogLevel.
using LevelCounts = std::array<uint64_t, 6>;

// Receives lines as they come. offer() must not block: false means "not now" (its buffer is
// full), and the line is skipped for this follower.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual bool offer(const LogLine& line) = 0;
  // The lines of one read, in one call, so that a follower can send them as one event and a
  // stuck one skips them with one test instead of one per line (issue 25). Returns how many
  // lines were skipped. By default, each line through offer().
  virtual size_t offer_batch(const LogBatch& batch);
  // Whether offer_batch() could take lines now. A sink that cannot is never shown the lines of
  // a read: it is told what it missed instead, with one call per read (issue 25: a stuck
  // follower cost the block a filter test per line). Once false within a read, it must stay
  // false until the read ends.
  virtual bool taking_lines() const { return true; }
  // The lines of one read of `stream` that this sink was not offered, `per_level` of each
  // level; returns how many of them it would have taken: they count as skipped, exactly as if
  // offer_batch() had refused them. By default, all of them.
  virtual size_t missed(LogStream stream, const LevelCounts& per_level);
  // The block's files were not written (`error`): a sink that reads them instead of taking
  // lines (a `logs -f` that follows the files) must be offered the lines from now on.
  virtual void files_failed(const std::string& error) { (void)error; }
};

class BlockLogs {
 public:
  // directory: <storage>/logs/<sandbox-id>; created when missing. Empty = no files (tests).
  // With `storage_root` (which holds `directory`), the directory is made and opened below the
  // verified root with no symlink on the way (base/safe_open.h), and held open.
  static Result<std::shared_ptr<BlockLogs>> open(std::string block, std::string directory,
                                                 LogSettings settings,
                                                 const std::string& storage_root = "");

  const std::string& block() const { return block_; }
  const std::string& directory() const { return directory_; }

  // Bytes read from the block's pipe for `stream`.
  void feed(LogStream stream, std::string_view data);
  // The pipe closed: the unfinished last line, if any, becomes a line.
  void end_of_stream(LogStream stream);
  // A line of our own about the block ("[stackie] restarting in 200 ms").
  void note(std::string_view text);

  std::vector<LogLine> tail(size_t lines) const;

  // Followers: they stay registered across restarts of the block (BlockLogs outlives its
  // processes). A follower that refused lines gets one marker line saying how many it missed
  // before the next line it accepts.
  uint64_t follow(LogSink* sink);
  void unfollow(uint64_t id);
  size_t follower_count() const { return followers_.size(); }
  // Batches of lines that could not be written to the files, and the last such error ("" when
  // the last write succeeded): `status` shows them per block.
  uint64_t write_errors() const { return write_errors_; }
  // Lines of the block's own output announcing `level` (warn and worse are what `status`
  // shows), since the daemon started keeping this block's logs.
  uint64_t lines_at(LogLevel level) const { return level_counts_[static_cast<size_t>(level)]; }
  const std::string& write_error() const { return write_error_; }
  // Bytes this block holds outside the ring: our own records not yet written and the lines the
  // splitter put together in its last read. A flood grows them, a quiet read gives them back
  // (bench/scale: hundreds of blocks).
  size_t batch_buffer_bytes() const {
    return own_records_.capacity() + batch_text_.capacity() +
           batch_copied_.capacity() * sizeof(CopiedLine);
  }
  // Bytes of the buffers every block of this thread handles its reads in (records, lines): a
  // flood grows them, kSmallReadsBeforeRelease small reads in a row give them back.
  static size_t read_scratch_bytes();
  static constexpr unsigned kSmallReadsBeforeRelease = 16;

 private:
  BlockLogs(std::string block, std::string directory, LogSettings settings);
  // A line of our own (offered to followers at once), or of the block (batched for them).
  void add_own_line(LogStream stream, std::string_view text, int64_t time_ms);
  // Every line of a read has the read's `stamp`.
  void add_block_line(std::string_view text, std::string_view stamp);
  void deliver(const LogLine& line);
  // Before the lines of a read are split: whether any follower takes lines now (then they are
  // offered the read's lines) and what the counts stood at.
  void start_batch(LogStream stream, int64_t time_ms);
  // After: the ring takes the lines the read collected, every follower that takes lines is
  // offered them and the others are told what they missed; then the lines are forgotten.
  void finish_batch();
  // The ring takes the lines gathered so far (in pieces while no follower is offered them).
  void push_batch_to_ring();
  void deliver_batch(LogStream stream, int64_t time_ms);
  // Appends a line to the batch; the test and the store are all a line costs (a vector's
  // push_back was a call per line, issue 25).
  void gather(const LogBatchLine& line) {
    if (batch_size_ == batch_lines_.size()) grow_batch();
    batch_lines_[batch_size_++] = line;
  }
  // Makes room for one more line, or hands the lines so far to the ring.
  void grow_batch();
  std::span<const LogBatchLine> batch() const { return {batch_lines_.data(), batch_size_}; }
  std::optional<LogFilesWritten> write_files();
  void flush_files();
  // What a write to the files came to (the errors `status` shows).
  void files_written(const LogFilesWritten& written);

  struct Follower {
    LogSink* sink;
    uint64_t skipped = 0;
  };

  std::string block_;
  std::string directory_;
  LogSettings settings_;
  LineSplitter out_splitter_, err_splitter_;
  std::unique_ptr<LogFiles> files_;  // null: no files
  // What one read needs while it is handled and no longer: its records for the files
  // ("STAMP TEXT\n", of the read's stream) and its lines for the ring and the followers. A read
  // is handled whole before the next begins (reads run on the loop's one thread, and nothing in
  // a read starts another), so every block of a thread uses the same ones: with 8 blocks in a
  // flood, a set per block (320 KiB of records and 80 KiB of lines each) kept the data of the
  // read at hand out of the cache (bench/RESULTS.md, issue 25). A BlockLogs lives on the
  // thread that made it.
  struct ReadScratch {
    AppendBuffer records;
    std::vector<LogBatchLine> lines;
    const BlockLogs* reader = nullptr;  // whose read is being handled
    // Small reads in a row, of any block: one block's quiet line between the reads of another
    // block's flood must not give back the buffers that flood is using.
    unsigned small_reads = 0;
    // The read is over: forgets its records and lines, and gives the memory back after enough
    // small reads in a row.
    void end_read(size_t lines_read);
  };
  static ReadScratch& thread_scratch();
  AppendBuffer& read_records_ = thread_scratch().records;
  AppendBuffer own_records_;  // our own lines for stderr.log, not yet written
  TimestampText stamps_;
  LineRing ring_;
  uint64_t next_seq_ = 1;
  uint64_t next_follower_ = 1;
  std::map<uint64_t, Follower> followers_;
  // The lines of the read being split, for the ring and the followers: views of the read (read_,
  // set during feed) or, for lines the splitter put together, copies one after the other in
  // batch_text_ (where batch_copied_ says), so that a batch costs no allocation per line.
  struct CopiedLine {
    size_t line;          // in batch_lines_
    size_t offset, size;  // in batch_text_
  };
  std::string_view read_;
  std::string batch_text_;
  std::vector<LogBatchLine>& batch_lines_ = thread_scratch().lines;  // the first batch_size_
  size_t batch_size_ = 0;
  std::vector<CopiedLine> batch_copied_;
  bool offering_ = false;  // some follower takes lines: the read's lines are offered
  LogStream batch_stream_ = LogStream::out;  // the read's
  int64_t batch_time_ms_ = 0;
  // The read's first line and, for followers that were not offered its lines, how many of each
  // level it had: level_counts_ now less level_counts_ then.
  uint64_t batch_first_seq_ = 0;
  LevelCounts counts_before_batch_{};
  uint64_t write_errors_ = 0;
  LevelCounts level_counts_{};  // by LogLevel, since the logs were opened
  std::string write_error_;
};

}  // namespace stackie
