// A block's log files (DESIGN.md §7): <logs>/<sandbox-id>/{stdout,stderr}.log, each rotated by
// size, in a directory held open and made again when deleted. Written on the daemon's loop, one
// O_APPEND write per stream and read (BlockLogs): writing them from a second thread cost more
// CPU than it took off the loop (bench/RESULTS.md, 2026-12-04).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/safe_open.h"

namespace stackie {

// What becomes of the file that a rotation pushes out of the kept count, its name gone (unless a
// rename failed or the files had a gap; its close then frees nothing): the last close frees its
// pages, which under a flood of logs was a tenth of the daemon's time, in unlinkat
// (bench/RESULTS.md, issue 25). The daemon closes it on libuv's thread pool
// (close_on_thread_pool), off its loop. Empty: the file is removed on the spot.
using ReleaseRotatedOut = std::function<void(UniqueFd)>;

// Closes `fd` on `loop`'s thread pool; at once if the pool cannot take it.
void close_on_thread_pool(uv_loop_t* loop, UniqueFd fd);

// One stream's file and its rotated predecessors: NAME, NAME.1 … NAME.(count-1), all in one
// directory held open: every open, rename and truncation is relative to it and never follows a
// symlink (issue 14: a log file replaced by a link to a file of the user's is refused).
class RotatingFile {
 public:
  // `dir` stays owned by the caller and open while this lives; `dir_shown` names it.
  RotatingFile(int dir, std::string dir_shown, std::string name, uint64_t max_bytes, int count);
  // Opens the directory of `path` itself.
  RotatingFile(std::string path, uint64_t max_bytes, int count);
  ~RotatingFile();
  RotatingFile(const RotatingFile&) = delete;
  RotatingFile& operator=(const RotatingFile&) = delete;
  Status append(std::string_view text);
  const std::string& path() const { return path_; }
  // The directory was made again (the old one was deleted): the file is opened there next.
  void use_directory(int dir);
  void release_rotated_out_with(ReleaseRotatedOut release) { release_ = std::move(release); }

 private:
  // The file we hold is still the one named in the directory: not deleted nor renamed away by
  // someone else's rotation. Checked before each write, so a vanished file is made again on the
  // next line, without a timer.
  bool still_in_directory() const;
  // NAME.count and up: files of a larger logs.max_files kept before. Older than every file kept,
  // yet a follower of the files (`logs -f`) that reads every file left would read them as new.
  void remove_leftovers();
  Status open();
  Status rotate();
  Status write_all(std::string_view text);
  UniqueFd own_dir_;  // the constructor from a path opened it
  int dir_ = -1;
  std::string dir_shown_;
  std::string name_;
  std::string path_;
  uint64_t max_bytes_;
  int count_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool leftovers_removed_ = false;
  ReleaseRotatedOut release_;
};

// What one write of a block's records to its files came to: how many of its batches (one per
// stream) were not written, the first error, and the error still standing after the write: the
// last one of a file whose last write failed ("" when both files took their last batch).
struct LogFilesWritten {
  uint64_t failed_batches = 0;
  std::string first_error;
  std::string error_now;
};

// Both streams' files of one block.
class LogFiles {
 public:
  // `directory` is made (0700) when missing; with `storage_root` (which holds it), below the
  // verified root with no symlink on the way (base/safe_open.h). Each stream's file rotates
  // past `max_bytes`, `count` files kept (RotatingFile), what rotation pushes out handed to
  // `release`.
  static Result<std::unique_ptr<LogFiles>> open(std::string directory, uint64_t max_bytes,
                                                int count, std::string storage_root,
                                                const ReleaseRotatedOut& release = {});
  // Appends records ("STAMP TEXT\n" each) to stdout.log and stderr.log.
  LogFilesWritten write(std::string_view out, std::string_view err);

 private:
  LogFiles(std::string directory, std::string storage_root, UniqueFd dir, uint64_t max_bytes,
           int count);
  // The log directory was deleted (with the files in it): make it again, as open() did.
  Status reopen_directory_if_gone();

  std::string directory_;
  std::string storage_root_;
  UniqueFd directory_fd_;  // before the files: they use it until they are gone
  RotatingFile out_file_, err_file_;
  std::string out_error_, err_error_;  // why the file's last write failed, or ""
};

}  // namespace stackie
