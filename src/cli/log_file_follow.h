// `stackie logs -f` reading the blocks' log files itself (issue 25): the daemon sends the tail
// and where each file ended then (docs/ipc.md, the `files` event), and the lines that come
// after are read here, from stdout.log and stderr.log, as `tail -F` would. The daemon does
// nothing per line for such a follower: what it costs a flooding block is its own reading (0-11%
// of the block's rate on two cores, where the events of a follower took 30-60%:
// bench/RESULTS.md), and a
// follower that falls behind misses no line until the files it has not read are rotated away
// (said in a note). Linux (inotify); elsewhere supported() is false and the daemon sends
// events, as before.
//
// The files are the daemon's (no block can write there), opened with O_NOFOLLOW all the same,
// relative to their directory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/json.h"

namespace stackie::cli {

// Where the follower of one file starts: the file that was stdout.log or stderr.log (inode 0:
// there was none, so everything in the first one is new), its size then, and when it was made
// (µs since the epoch; 0: unknown), which tells it from a newer file given its inode.
struct LogFileStart {
  uint64_t inode = 0;
  uint64_t offset = 0;
  uint64_t born_us = 0;
};

// One file's start in a `files` event: {inode, size, born}.
inline LogFileStart log_file_start(const Json& file) {
  return {static_cast<uint64_t>(file["inode"].int_or(0)),
          static_cast<uint64_t>(file["size"].int_or(0)),
          static_cast<uint64_t>(file["born"].int_or(0))};
}

class LogFileFollow {
 public:
  static bool supported();
  static Result<std::unique_ptr<LogFileFollow>> create();
  ~LogFileFollow();
  LogFileFollow(const LogFileFollow&) = delete;
  LogFileFollow& operator=(const LogFileFollow&) = delete;

  // Follows `directory`'s stdout.log (`out`) and stderr.log (`err`) of stack/block from where
  // they were.
  Status add(const std::string& stack, const std::string& block, const std::string& directory,
             const LogFileStart* out, const LogFileStart* err);
  // Waits up to `timeout_ms` (-1: without end) for `other` (the daemon's socket; -1 for none)
  // to be readable or a followed directory to change: which of them are.
  struct Ready {
    bool other = false;
    bool files = false;
  };
  Result<Ready> wait(int other, int timeout_ms) const;

  // Whole records of one stream, "STAMP TEXT\n" each, as the daemon wrote them.
  using Records = std::function<void(const std::string& stack, const std::string& block,
                                     std::string_view stream, std::string_view records)>;
  // A line of ours about a file (lines it could not read).
  using Note = std::function<void(const std::string& stack, const std::string& block,
                                  const std::string& message)>;
  // Reads what every followed file gained since, rotations followed: at most 8 MiB of each
  // file a call, so that one flooding block holds up no other. False when a file had more:
  // call again before wait().
  bool drain(const Records& records, const Note& note);
  // drain() until every file was read to its end.
  void drain_to_end(const Records& records, const Note& note) {
    while (!drain(records, note)) {
    }
  }
  // Reads what stack/block's files hold to their end, then stops reading them (the daemon
  // sends its lines instead: `files_failed`).
  void finish(const std::string& stack, const std::string& block, const Records& records,
              const Note& note);

  struct Tail;
  struct Impl;

 private:
  LogFileFollow() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stackie::cli
