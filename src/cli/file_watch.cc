#include "cli/file_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/safe_open.h"
#include "cli/watch_glob.h"

namespace stackie::cli {

namespace {

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

}  // namespace

FileWatch::FileWatch(uv_loop_t* loop, WatchSpec spec, Changed changed, Note note)
    : loop_(loop), spec_(std::move(spec)), changed_(std::move(changed)), note_(std::move(note)) {}

FileWatch::~FileWatch() = default;

Result<std::unique_ptr<FileWatch>> FileWatch::start(uv_loop_t* loop, WatchSpec spec,
                                                    Changed changed, Note note) {
  std::unique_ptr<FileWatch> watch(
      new FileWatch(loop, std::move(spec), std::move(changed), std::move(note)));
  int status =
      watch->debounce_.init([&](uv_timer_t* t) { return uv_timer_init(loop, t); }, watch.get());
  if (status < 0) return Error{status, std::string("timer: ") + uv_strerror(status)};
  STACKIE_TRY(watch->add_tree(""));
  return watch;
}

std::string FileWatch::absolute(const std::string& relative) const {
  return relative.empty() ? spec_.root : spec_.root + "/" + relative;
}

// The directory `relative` and every directory below it that is not ignored, breadth first.
Status FileWatch::add_tree(const std::string& relative) {
  std::vector<std::string> queue = {relative};
  while (!queue.empty()) {
    std::string next = std::move(queue.back());
    queue.pop_back();
    if (dirs_.count(next)) continue;
    if (dirs_.size() >= kMaxDirectories) {
      if (!full_noted_ && note_)
        note_("watching " + std::to_string(kMaxDirectories) + " directories of " + spec_.root +
              " already; the others are not watched (add them to 'watch.ignore')");
      full_noted_ = true;
      return {};
    }
    Status added = add_directory(next, queue);
    if (!added.ok() && next == relative && relative.empty()) return added;  // the root itself
  }
  return {};
}

Status FileWatch::add_directory(const std::string& relative, std::vector<std::string>& children) {
  std::string path = absolute(relative);
  // Opened without following a link: a directory the block replaced by a symlink is skipped.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return system_error(errno, "watch " + path);
  struct stat opened {};
  if (::fstat(fd.get(), &opened) != 0) return system_error(errno, "watch " + path);
  Directory dir;
  dir.dev = opened.st_dev;
  dir.ino = opened.st_ino;
  int status = dir.handle.init([&](uv_fs_event_t* h) { return uv_fs_event_init(loop_, h); }, this);
  if (status < 0) return Error{status, "watch " + path + ": " + uv_strerror(status)};
  status = uv_fs_event_start(
      dir.handle.get(),
      [](uv_fs_event_t* handle, const char* name, int events, int result) {
        (void)events;
        if (auto* self = static_cast<FileWatch*>(handle->data))
          self->on_event(handle, name, result);
      },
      path.c_str(), 0);
  if (status < 0) return Error{status, "watch " + path + ": " + uv_strerror(status)};
  // The watch is on a path; make sure the path still is the directory that was opened.
  struct stat now {};
  if (::lstat(path.c_str(), &now) != 0 || !S_ISDIR(now.st_mode) || now.st_dev != dir.dev ||
      now.st_ino != dir.ino)
    return Error{-ELOOP, "watch " + path + ": it changed while being watched; skipped"};
  DIR* listing = ::fdopendir(fd.release());
  if (listing != nullptr) {
    while (const dirent* entry = ::readdir(listing)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string child = join(relative, name);
      if (always_ignored(child)) continue;
      bool ignored = false;
      for (const auto& glob : spec_.ignore) ignored = ignored || glob_matches(glob, child);
      if (ignored) continue;
      struct stat info {};
      if (::fstatat(::dirfd(listing), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(info.st_mode))
        children.push_back(child);
    }
    ::closedir(listing);
  }
  dirs_.emplace(relative, std::move(dir));
  return {};
}

void FileWatch::on_event(uv_fs_event_t* handle, const char* name, int status) {
  if (status < 0 || name == nullptr) return;
  char buffer[4096];
  size_t size = sizeof buffer;
  if (uv_fs_event_getpath(handle, buffer, &size) != 0) return;
  std::string dir(buffer, size);
  std::string relative;
  if (dir.size() > spec_.root.size()) relative = dir.substr(spec_.root.size() + 1);
  std::string path = join(relative, name);
  // A directory that appeared (or came back): watch it, and count what is in it.
  struct stat info {};
  if (::lstat(absolute(path).c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
      !always_ignored(path)) {
    auto known = dirs_.find(path);
    if (known != dirs_.end() &&
        (known->second.dev != info.st_dev || known->second.ino != info.st_ino))
      dirs_.erase(known);  // replaced: the old watch sees nothing any more
    bool ignored = false;
    for (const auto& glob : spec_.ignore) ignored = ignored || glob_matches(glob, path);
    if (!ignored) (void)add_tree(path);
  }
  if (!watch_wants(spec_.paths, spec_.ignore, path)) return;
  if (pending_.empty()) first_change_ms_ = uv_now(loop_);
  pending_.insert(path);
  uv_timer_start(
      debounce_.get(),
      [](uv_timer_t* timer) {
        if (auto* self = static_cast<FileWatch*>(timer->data)) self->flush();
      },
      static_cast<uint64_t>(spec_.debounce.count()), 0);
}

void FileWatch::flush() {
  std::vector<std::string> paths(pending_.begin(), pending_.end());
  pending_.clear();
  changed_(std::move(paths));
  first_change_ms_ = 0;
}

}  // namespace stackie::cli
