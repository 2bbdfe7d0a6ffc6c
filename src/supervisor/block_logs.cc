#include "supervisor/block_logs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>

namespace stackie {

// The calendar from <chrono> rather than gmtime_r, which Windows lacks (its gmtime_s swaps
// the arguments): the same UTC fields everywhere, no platform file.
std::string format_timestamp(int64_t time_ms) {
  using namespace std::chrono;
  sys_time<milliseconds> when{milliseconds(time_ms)};
  auto day = floor<days>(when);
  year_month_day date{day};
  hh_mm_ss<milliseconds> time{when - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<int>(time.subseconds().count()));
  return buf;
}

namespace {

std::string skipped_marker(uint64_t skipped) {
  return "[stackie] " + std::to_string(skipped) + " lines skipped: the follower did not keep up";
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

BlockLogs::BlockLogs(std::string block, std::string directory, LogSettings settings)
    : block_(std::move(block)),
      directory_(std::move(directory)),
      settings_(settings),
      out_splitter_(settings.max_line),
      err_splitter_(settings.max_line),
      ring_(settings.ring_lines, settings.ring_bytes) {}

Result<std::shared_ptr<BlockLogs>> BlockLogs::open(std::string block, std::string directory,
                                                   LogSettings settings,
                                                   const std::string& storage_root) {
  std::unique_ptr<LogFiles> files;
  if (!directory.empty()) {
    STACKIE_TRY_ASSIGN(opened,
                       LogFiles::open(directory, settings.file_max_bytes, settings.file_count,
                                      storage_root, settings.release_rotated_out));
    files = std::move(opened);
  }
  std::shared_ptr<BlockLogs> logs(new BlockLogs(std::move(block), directory, settings));
  logs->files_ = std::move(files);
  return logs;
}

// Every line of one read from the pipe gets the time of that read: they arrived together, and
// reading the clock and formatting the stamp once per read instead of once per line was half
// of the daemon's CPU under a flood of short lines (bench/logs).
void BlockLogs::feed(LogStream stream, std::string_view data) {
  auto& splitter = stream == LogStream::err ? err_splitter_ : out_splitter_;
  int64_t time_ms = now_ms();
  read_ = data;
  start_batch(stream, time_ms);
  const std::string_view stamp = stamps_.of(time_ms);
  splitter.feed(data, [&](std::string_view line) { add_block_line(line, stamp); });
  finish_batch();
  read_ = {};
}

void BlockLogs::end_of_stream(LogStream stream) {
  auto& splitter = stream == LogStream::err ? err_splitter_ : out_splitter_;
  int64_t time_ms = now_ms();
  start_batch(stream, time_ms);
  const std::string_view stamp = stamps_.of(time_ms);
  splitter.flush([&](std::string_view line) { add_block_line(line, stamp); });
  finish_batch();
}

void BlockLogs::note(std::string_view text) {
  add_own_line(LogStream::daemon, std::string("[stackie] ") + std::string(text), now_ms());
  flush_files();
}

const std::string& TimestampText::of(int64_t time_ms) {
  if (time_ms != time_ms_) {
    time_ms_ = time_ms;
    text_ = format_timestamp(time_ms);
  }
  return text_;
}

namespace {

// Buffers of reads are kept from read to read (no allocation per read while a flood goes on).
// One of a block's own that a flood grew past kKeptBatchBytes is given back once a read needs
// less than a quarter of that: hundreds of quiet blocks must not each keep a flood's buffers
// (bench/scale). Those of the thread wait for several small reads in a row (ReadScratch).
constexpr size_t kKeptBatchBytes = 64 * 1024;

// A std::string, std::vector or AppendBuffer of the batch.
template <typename Buffer>
void release_after_flood(Buffer& batch) {
  constexpr size_t kItem = sizeof(typename Buffer::value_type);
  if (batch.capacity() * kItem > kKeptBatchBytes && batch.size() * kItem < kKeptBatchBytes / 4)
    Buffer().swap(batch);
  else
    batch.clear();
}

}  // namespace

BlockLogs::ReadScratch& BlockLogs::thread_scratch() {
  thread_local ReadScratch scratch;
  return scratch;
}

size_t BlockLogs::read_scratch_bytes() {
  const ReadScratch& scratch = thread_scratch();
  return scratch.records.capacity() + scratch.lines.capacity() * sizeof(LogBatchLine);
}

void BlockLogs::ReadScratch::end_read(size_t lines_read) {
  const bool small = records.size() < kKeptBatchBytes / 4 &&
                     lines_read * sizeof(LogBatchLine) < kKeptBatchBytes / 4;
  small_reads = small ? small_reads + 1 : 0;
  records.clear();
  if (small_reads < kSmallReadsBeforeRelease) return;
  small_reads = 0;
  if (records.capacity() > kKeptBatchBytes) AppendBuffer().swap(records);
  if (lines.capacity() * sizeof(LogBatchLine) > kKeptBatchBytes)
    std::vector<LogBatchLine>().swap(lines);
}

// One write per read from the pipe, not one per line. A failed one is told to the followers at
// once (LogSink::files_failed): one that reads the files takes lines from then on. Our own lines
// go to stderr.log: with a read of stdout, in the same call; a read of stderr took them first
// (start_batch).
std::optional<LogFilesWritten> BlockLogs::write_files() {
  const bool in_read = thread_scratch().reader == this;  // read_records_ are ours
  const bool own_too = !in_read || batch_stream_ == LogStream::out;
  std::string_view out, err;
  if (!in_read)
    err = own_records_.view();
  else if (batch_stream_ == LogStream::out)
    out = read_records_.view(), err = own_records_.view();
  else
    err = read_records_.view();
  if (!files_ || (out.empty() && err.empty())) return std::nullopt;
  LogFilesWritten written = files_->write(out, err);
  if (own_too) release_after_flood(own_records_);  // the read's: ReadScratch::end_read
  if (!written.first_error.empty())
    for (auto& [id, follower] : followers_) follower.sink->files_failed(written.first_error);
  return written;
}

void BlockLogs::flush_files() {
  if (auto written = write_files()) files_written(*written);
}

// An error is said once when it starts or changes (in the ring, for `logs`; in stderr.log with
// the next write if that file works); `status` shows it until the file that failed takes a
// write again.
void BlockLogs::files_written(const LogFilesWritten& written) {
  write_errors_ += written.failed_batches;
  std::string changed;
  if (!written.first_error.empty() && written.first_error != write_error_)
    changed = written.first_error;
  write_error_ = written.error_now;
  if (!changed.empty())
    add_own_line(LogStream::daemon, "[stackie] log file not written: " + changed, now_ms());
}

// The hot path of a flood: per line, a classification, a record appended to the file batch and
// the line gathered for the ring and the followers, with no allocation (issue 25).
void BlockLogs::add_block_line(std::string_view text, std::string_view stamp) {
  LogLevel level = classify_log_line(text);
  ++level_counts_[static_cast<size_t>(level)];
  uint64_t seq = next_seq_++;
  if (files_) {
    // One extension and three copies instead of four appends that each check the capacity.
    char* out = read_records_.extend(stamp.size() + 1 + text.size() + 1);
    // The stamp of any year of four digits: a copy of a size known here is a few moves, not a
    // call (issue 25).
    constexpr size_t kStampSize = std::string_view("2026-12-01T21:35:00.123Z").size();
    if (stamp.size() == kStampSize)
      std::memcpy(out, stamp.data(), kStampSize);
    else
      std::memcpy(out, stamp.data(), stamp.size());
    out += stamp.size();
    *out++ = ' ';
    if (!text.empty()) std::memcpy(out, text.data(), text.size());
    out[text.size()] = '\n';
  }
  // A line within the read is kept as a view of it: the read outlives the batch, and a copy per
  // line was most of what a follower, even a stuck one, cost the block (issue 25). A line the
  // splitter put together (across reads, or a piece of an overlong one) lives only during this
  // call: it is copied, and its view made in finish_batch, as batch_text_ may move while it
  // grows.
  const std::less<const char*> before;
  if (!before(text.data(), read_.data()) &&
      !before(read_.data() + read_.size(), text.data() + text.size())) {
    gather({seq, level, text});
  } else {
    gather({seq, level, std::string_view()});  // first: it may hand the lines so far to the ring
    batch_copied_.push_back({batch_size_ - 1, batch_text_.size(), text.size()});
    batch_text_.append(text);
  }
}

void BlockLogs::add_own_line(LogStream stream, std::string_view text, int64_t time_ms) {
  LogLevel level = LogLevel::unknown;
  ++level_counts_[static_cast<size_t>(level)];
  uint64_t seq = next_seq_++;
  // Our own notes go to stderr.log so that the files tell the whole story.
  if (files_) {
    own_records_.append(stamps_.of(time_ms));
    own_records_.append(' ');
    own_records_.append(text);
    own_records_.append('\n');
  }
  if (!followers_.empty()) deliver(LogLine{seq, time_ms, stream, level, std::string(text)});
  ring_.push(seq, time_ms, stream, level, text);
}

void BlockLogs::start_batch(LogStream stream, int64_t time_ms) {
  // Reads never nest (ReadScratch): one that did would write another block's lines to our files
  // and grow the lines under the other read's feet. A fault of ours, not of any block: stop
  // here rather than go on with mixed logs.
  ReadScratch& scratch = thread_scratch();
  if (scratch.reader != nullptr) {
    std::fprintf(stderr, "stackied: a read of %s's logs began within a read of %s's\n",
                 block_.c_str(), scratch.reader->block_.c_str());
    std::abort();
  }
  scratch.reader = this;
  // Our own lines not yet written come before this read's in stderr.log.
  if (stream == LogStream::err && !own_records_.empty()) {
    read_records_.append(own_records_.view());
    release_after_flood(own_records_);
  }
  batch_stream_ = stream;
  batch_time_ms_ = time_ms;
  offering_ = std::any_of(followers_.begin(), followers_.end(), [](const auto& follower) {
    return follower.second.sink->taking_lines();
  });
  batch_first_seq_ = next_seq_;
  counts_before_batch_ = level_counts_;
}

// The ring takes a read's lines at once: most of a flood's read is pushed out again by its own
// last lines, whose texts alone it then copies (LineRing::push_lines).
void BlockLogs::push_batch_to_ring() {
  for (const CopiedLine& copied : batch_copied_)
    batch_lines_[copied.line].text =
        std::string_view(batch_text_).substr(copied.offset, copied.size);
  ring_.push_lines(batch_time_ms_, batch_stream_, batch());
}

// The ring, the files, then the followers: a follower of the files whose write failed is
// switched to lines before this read is delivered (it is told the read's lines were skipped,
// as they were not gathered for it). The note of the failure comes after the read's lines.
void BlockLogs::finish_batch() {
  push_batch_to_ring();
  const std::optional<LogFilesWritten> written = write_files();
  deliver_batch(batch_stream_, batch_time_ms_);
  release_after_flood(batch_text_);
  ReadScratch& scratch = thread_scratch();
  scratch.end_read(next_seq_ - batch_first_seq_);
  scratch.reader = nullptr;
  batch_size_ = 0;
  batch_copied_.clear();
  if (written) files_written(*written);
}

void BlockLogs::deliver_batch(LogStream stream, int64_t time_ms) {
  if (followers_.empty()) return;
  // Every line of the read was counted by its level, offered or not.
  LevelCounts per_level{};
  uint64_t lines = 0;
  for (size_t i = 0; i < per_level.size(); ++i) {
    per_level[i] = level_counts_[i] - counts_before_batch_[i];
    lines += per_level[i];
  }
  if (lines == 0) return;
  const LogBatch lines_read{time_ms, stream, batch()};
  for (auto& [id, follower] : followers_) {
    if (follower.skipped > 0) {
      LogLine marker{batch_first_seq_, time_ms, LogStream::daemon, LogLevel::unknown,
                     skipped_marker(follower.skipped)};
      if (!follower.sink->offer(marker)) {
        follower.skipped += lines;
        continue;
      }
      follower.skipped = 0;
    }
    if (offering_ && follower.sink->taking_lines())
      follower.skipped += follower.sink->offer_batch(lines_read);
    else
      follower.skipped += follower.sink->missed(stream, per_level);
  }
}

// While no follower is offered the lines, the ring takes them in pieces of kRingPiece: a read
// of 256 KiB of empty lines would otherwise hold 8 MiB of views. The ring ends the same either
// way; only fewer of the lines that leave it again are never copied.
void BlockLogs::grow_batch() {
  constexpr size_t kRingPiece = 4096;
  if (!offering_ && batch_size_ >= kRingPiece) {
    push_batch_to_ring();
    batch_size_ = 0;
    batch_copied_.clear();
    batch_text_.clear();
    return;
  }
  batch_lines_.resize(std::max<size_t>(16, 2 * batch_lines_.size()));
}

size_t LogSink::offer_batch(const LogBatch& batch) {
  size_t skipped = 0;
  for (const auto& line : batch.lines)
    if (!offer(LogLine{line.seq, batch.time_ms, batch.stream, line.level, std::string(line.text)}))
      ++skipped;
  return skipped;
}

size_t LogSink::missed(LogStream, const LevelCounts& per_level) {
  uint64_t lines = 0;
  for (uint64_t count : per_level) lines += count;
  return static_cast<size_t>(lines);
}

void BlockLogs::deliver(const LogLine& line) {
  for (auto& [id, follower] : followers_) {
    if (follower.skipped > 0) {
      LogLine marker{line.seq, line.time_ms, LogStream::daemon, LogLevel::unknown,
                     skipped_marker(follower.skipped)};
      if (!follower.sink->offer(marker)) {
        ++follower.skipped;
        continue;
      }
      follower.skipped = 0;
    }
    if (!follower.sink->offer(line)) ++follower.skipped;
  }
}

std::vector<LogLine> BlockLogs::tail(size_t lines) const {
  return ring_.tail(lines);
}

uint64_t BlockLogs::follow(LogSink* sink) {
  uint64_t id = next_follower_++;
  followers_[id] = Follower{sink};
  return id;
}

void BlockLogs::unfollow(uint64_t id) {
  followers_.erase(id);
}

}  // namespace stackie
