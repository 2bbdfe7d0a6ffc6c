// Watching one block's project directory for `stackie watch` (stack_model.h WatchSpec) with
// libuv's fs events: inotify on Linux is one watch per directory, so every directory of the
// tree gets its own, and a directory created later gets one when it appears. Changes are
// debounced: `changed` runs once the tree has been quiet for the spec's debounce, with every
// path that changed meanwhile and that the spec wants (cli/watch_glob.h).
//
// The tree may be written by the block (its project directory is bound read-write): nothing
// here follows a symlink. A directory is opened with O_NOFOLLOW before it is watched, and its
// watch is dropped when the path, looked at again after the watch started, is no longer the
// directory that was opened (a block swapping it for a link to elsewhere). At most
// kMaxDirectories are watched: a block making directories by the thousand gets a note, not
// the user's inotify budget.
#pragma once

#include <uv.h>

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/uv_handle.h"
#include "stack/stack_model.h"

namespace stackie::cli {

class FileWatch {
 public:
  static constexpr size_t kMaxDirectories = 4096;
  using Changed = std::function<void(std::vector<std::string> paths)>;
  using Note = std::function<void(const std::string& message)>;

  // Watches spec.root now; an error when it cannot be watched at all.
  static Result<std::unique_ptr<FileWatch>> start(uv_loop_t* loop, WatchSpec spec, Changed changed,
                                                  Note note);
  ~FileWatch();
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  size_t directories() const { return dirs_.size(); }
  // When the first change of the batch being debounced came (uv_now), 0 when none is pending.
  uint64_t first_change_ms() const { return first_change_ms_; }

 private:
  struct Directory {
    UvHandle<uv_fs_event_t> handle;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  FileWatch(uv_loop_t* loop, WatchSpec spec, Changed changed, Note note);
  Status add_tree(const std::string& relative);
  Status add_directory(const std::string& relative, std::vector<std::string>& children);
  void on_event(uv_fs_event_t* handle, const char* name, int status);
  void flush();
  std::string absolute(const std::string& relative) const;

  uv_loop_t* loop_;
  WatchSpec spec_;
  Changed changed_;
  Note note_;
  std::map<std::string, Directory> dirs_;  // by path relative to the root ("" = the root)
  UvHandle<uv_timer_t> debounce_;
  std::set<std::string> pending_;
  uint64_t first_change_ms_ = 0;
  bool full_noted_ = false;
};

}  // namespace stackie::cli
