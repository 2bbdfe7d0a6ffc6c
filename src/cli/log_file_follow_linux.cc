// The follower of log files on Linux (log_file_follow.h): one inotify watch per block's log
// directory, each file read to its end after any change in its directory.
#include "cli/log_file_follow.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <tuple>
#include <vector>

#include "base/posix_io.h"
#include "base/safe_open.h"
#include "stack/settings.h"

namespace stackie::cli {

namespace {

// One read's worth: as much as a few rotations' worth of records would not fit, and as little
// as keeps the follower small.
constexpr size_t kReadSize = 1 << 20;
// What one file may give in one drain(): a block that floods does not hold up the others, nor
// the daemon's messages (drain() then says there is more).
constexpr size_t kReadPerDrain = 8 << 20;
constexpr size_t kMaxRecord = 4 << 20;
// How many rotated files (NAME.1 ...) are looked for: as many as a setting may keep.
constexpr int kMaxRotated = kMostLogFiles;

struct stat stat_of(int fd) {
  struct stat info {};
  if (fstat(fd, &info) != 0) info.st_ino = 0;
  return info;
}

uint64_t inode_of(int fd) {
  return static_cast<uint64_t>(stat_of(fd).st_ino);
}

// The inode `name` has in `dir` now, 0 when there is none (or it is not a regular file).
uint64_t inode_at(int dir, const std::string& name) {
  struct stat info {};
  if (fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(info.st_mode))
    return 0;
  return static_cast<uint64_t>(info.st_ino);
}

// Whether `file` is the one the daemon's offset was in: its inode, no shorter than the offset,
// and born when that one was (where the file system says): a file made after rotations deleted
// that one may have been given its inode.
bool is_start(int file, const LogFileStart& start) {
  const struct stat info = stat_of(file);
  if (static_cast<uint64_t>(info.st_ino) != start.inode) return false;
  if (static_cast<uint64_t>(info.st_size) < start.offset) return false;
  const uint64_t born = file_birth_us(file, "");
  return start.born_us == 0 || born == 0 || born == start.born_us;
}

std::string rotated(const std::string& name, int k) {
  return name + "." + std::to_string(k);
}

// A regular file of `dir`, never through a link; anything else (a directory planted where a
// log file was) is no file to follow.
UniqueFd open_at(int dir, const std::string& name) {
  UniqueFd file(openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (file.valid() && !S_ISREG(stat_of(file.get()).st_mode)) return UniqueFd();
  return file;
}

// A block's log directory, held open; made again by the daemon when someone deletes it.
struct LogDirectory {
  std::string path;
  UniqueFd fd;
};

}  // namespace

// One stream's file of one block: the file being read (it may have been renamed away by a
// rotation since), and the end of a record not written whole yet.
struct LogFileFollow::Tail {
  std::string stack, block, stream, name;
  LogDirectory* dir = nullptr;
  UniqueFd file;
  std::string partial;
  uint64_t after = 0;          // no file open: the inode of the one read last, rotated away
  bool lost_said = false;      // ... and that lines may be missing after it was said
  UniqueFd read_last;          // that file, held open so that no file made since has its inode
  bool lost_at_start = false;  // the file the daemon's offset was in is gone already
  bool from_oldest = false;    // every file found is new (none then, or it is gone): oldest first
};

struct LogFileFollow::Impl {
  UniqueFd inotify;
  // A block's directory: its files changing. Its parent: the directory made again after it
  // was deleted (a deleted directory's watch goes with it).
  static constexpr uint32_t kWatched = IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DONT_FOLLOW;
  static constexpr uint32_t kParentWatched = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW;
  std::vector<std::unique_ptr<LogDirectory>> directories;
  std::vector<std::unique_ptr<Tail>> tails;
  std::vector<char> buffer = std::vector<char>(kReadSize);

  void emit(Tail& tail, const Records& records) {
    tail.partial += '\n';
    records(tail.stack, tail.block, tail.stream, tail.partial);
    tail.partial.clear();
  }

  // Hands on the whole records in `data`, keeping a last one without its newline for later.
  void take(Tail& tail, std::string_view data, const Records& records) {
    if (!tail.partial.empty()) {
      const size_t newline = data.find('\n');
      tail.partial.append(
          data.substr(0, newline == std::string_view::npos ? data.size() : newline));
      if (newline == std::string_view::npos) {
        data = {};
      } else {
        emit(tail, records);
        data.remove_prefix(newline + 1);
      }
    }
    const size_t last = data.rfind('\n');
    if (last != std::string_view::npos) {
      records(tail.stack, tail.block, tail.stream, data.substr(0, last + 1));
      data.remove_prefix(last + 1);
    }
    tail.partial.append(data);
    // No record the daemon writes is this long (it cuts a block's overlong lines): whatever
    // this is, it is shown in pieces rather than held without end.
    if (tail.partial.size() > kMaxRecord) emit(tail, records);
  }

  // What the open file holds past where we are, up to `budget` bytes; false when it had more.
  bool read_some(Tail& tail, const Records& records, size_t& budget) {
    while (budget > 0) {
      const ssize_t n = read(tail.file.get(), buffer.data(), std::min(buffer.size(), budget));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return true;
      budget -= static_cast<size_t>(n);
      take(tail, std::string_view(buffer.data(), static_cast<size_t>(n)), records);
    }
    return false;
  }

  // The directory at its path is not the one held (deleted, and made again by the daemon):
  // the new one is followed from here on. False when it is the same, or none is there.
  bool directory_replaced(LogDirectory& dir) {
    UniqueFd now(open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!now.valid() || inode_of(now.get()) == inode_of(dir.fd.get())) return false;
    if (inotify_add_watch(inotify.get(), dir.path.c_str(), kWatched) < 0) return false;
    dir.fd = std::move(now);
    return true;
  }

  static bool directory_deleted(const LogDirectory& dir) {
    return stat_of(dir.fd.get()).st_nlink == 0;
  }

  // What follows `ours` once it is no longer NAME: the file written right after it, NAME.(k-1)
  // when ours is NAME.k now (NAME when k is 1: not made yet, when the rename was just done), or
  // when ours was rotated out of the directory too, the oldest file left (`lost`). Looked up
  // again when a rotation came between the look and the open.
  struct Next {
    UniqueFd file;
    bool lost = false;
  };
  Next next_after(Tail& tail, uint64_t ours) {
    const int dir = tail.dir->fd.get();
    for (int attempt = 0; attempt < 8; ++attempt) {
      int k = 1;
      while (k <= kMaxRotated && inode_at(dir, rotated(tail.name, k)) != ours) ++k;
      if (k > kMaxRotated) break;
      UniqueFd next = open_at(dir, k == 1 ? tail.name : rotated(tail.name, k - 1));
      if (inode_at(dir, rotated(tail.name, k)) == ours) return {std::move(next), false};
    }
    // Gone with its directory: the daemon makes a new one, and everything in it is new.
    if (directory_deleted(*tail.dir)) {
      if (!directory_replaced(*tail.dir)) return {};  // not made again yet
      return {oldest(tail), false};
    }
    return {oldest(tail), true};
  }

  UniqueFd oldest(Tail& tail) {
    const int dir = tail.dir->fd.get();
    for (int k = kMaxRotated; k >= 1; --k)
      if (UniqueFd file = open_at(dir, rotated(tail.name, k)); file.valid()) return file;
    return open_at(dir, tail.name);
  }

  // The file to read when none is open; invalid when there is none yet.
  UniqueFd next_file(Tail& tail, const std::function<void()>& say_lost) {
    if (tail.from_oldest) return oldest(tail);
    if (tail.after != 0) {  // the file after the one read last: still to be made, or made since
      Next next = next_after(tail, tail.after);
      if (next.lost && !tail.lost_said) say_lost();
      tail.lost_said = tail.lost_said || next.lost;
      return std::move(next.file);
    }
    UniqueFd file = open_at(tail.dir->fd.get(), tail.name);
    if (!file.valid() && directory_replaced(*tail.dir))
      file = open_at(tail.dir->fd.get(), tail.name);
    return file;
  }

  // Opens the file to read next; false when there is none yet, or the one found is the one read
  // last (still held, so that inode is that file: a rotation moved it while it was looked for).
  bool open_next(Tail& tail, const std::function<void()>& say_lost) {
    UniqueFd next = next_file(tail, say_lost);
    if (!next.valid() || (tail.after != 0 && inode_of(next.get()) == tail.after)) return false;
    tail.file = std::move(next);
    tail.from_oldest = false;
    tail.after = 0;
    tail.read_last = UniqueFd();
    tail.lost_said = false;
    return true;
  }

  // False when the file had more than this drain may take.
  bool drain(Tail& tail, const Records& records, const Note& note) {
    auto say_lost = [&] {
      note(tail.stack, tail.block,
           "[stackie] lines of " + tail.name +
               " may be missing here: its files were rotated away before they were read");
    };
    if (tail.lost_at_start) {
      tail.lost_at_start = false;
      say_lost();
    }
    size_t budget = kReadPerDrain;
    for (;;) {
      if (!tail.file.valid() && !open_next(tail, say_lost)) return true;
      if (!read_some(tail, records, budget)) return false;
      // At its end: still the file of that name, or rotated away (renamed NAME.1) after the
      // records just read? Then the one written after it is read from its start.
      const struct stat ours = stat_of(tail.file.get());
      if (inode_at(tail.dir->fd.get(), tail.name) == static_cast<uint64_t>(ours.st_ino)) {
        // Cut in place (a setting of one file: no rename): from its start again.
        const off_t at = lseek(tail.file.get(), 0, SEEK_CUR);
        if (at > ours.st_size) {
          tail.partial.clear();
          lseek(tail.file.get(), 0, SEEK_SET);
          say_lost();
          continue;
        }
        return true;
      }
      if (!read_some(tail, records, budget)) return false;  // written before the rename
      if (!tail.partial.empty()) emit(tail, records);       // a record cut short by a failed write
      tail.after = static_cast<uint64_t>(ours.st_ino);
      tail.read_last = std::move(tail.file);
    }
  }
};

bool LogFileFollow::supported() {
  return true;
}

Result<std::unique_ptr<LogFileFollow>> LogFileFollow::create() {
  std::unique_ptr<LogFileFollow> follow(new LogFileFollow());
  follow->impl_ = std::make_unique<Impl>();
  follow->impl_->inotify = UniqueFd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!follow->impl_->inotify.valid()) return system_error(errno, "inotify");
  return follow;
}

LogFileFollow::~LogFileFollow() = default;

void LogFileFollow::finish(const std::string& stack, const std::string& block,
                           const Records& records, const Note& note) {
  drain_to_end(records, note);
  std::erase_if(impl_->tails, [&](const std::unique_ptr<Tail>& tail) {
    return tail->stack == stack && tail->block == block;
  });
}

Result<LogFileFollow::Ready> LogFileFollow::wait(int other, int timeout_ms) const {
  pollfd ready[] = {{other, POLLIN, 0}, {impl_->inotify.get(), POLLIN, 0}};
  const int count = ::poll(ready, 2, timeout_ms);
  if (count < 0 && errno != EINTR) return system_error(errno, "poll");
  if (count <= 0) return Ready{};
  return Ready{ready[0].revents != 0, ready[1].revents != 0};
}

Status LogFileFollow::add(const std::string& stack, const std::string& block,
                          const std::string& directory, const LogFileStart* out,
                          const LogFileStart* err) {
  auto dir = std::make_unique<LogDirectory>();
  dir->path = directory;
  dir->fd = UniqueFd(open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir->fd.valid()) return system_error(errno, "open " + directory);
  // Watched before the files are opened: nothing written between the two goes unnoticed.
  if (inotify_add_watch(impl_->inotify.get(), directory.c_str(), Impl::kWatched) < 0)
    return system_error(errno, "watch " + directory);
  // Best effort: without it, a directory deleted and made again is seen at the next change of
  // another followed file.
  const std::string parent = directory.substr(0, directory.rfind('/'));
  if (!parent.empty())
    (void)inotify_add_watch(impl_->inotify.get(), parent.c_str(), Impl::kParentWatched);
  for (const auto& [stream, name, start] :
       {std::tuple{"stdout", "stdout.log", out}, std::tuple{"stderr", "stderr.log", err}}) {
    if (start == nullptr) continue;
    auto tail = std::make_unique<Tail>();
    tail->stack = stack;
    tail->block = block;
    tail->stream = stream;
    tail->name = name;
    tail->dir = dir.get();
    // The file the daemon's offset is in: the current one, or the one a rotation renamed
    // since. None then: everything in the first file is new. Rotated out of the directory
    // since: every file left is newer than it, so all are read, the oldest first (after a
    // note that lines may be missing).
    if (start->inode != 0) {
      for (int k = 0; k <= kMaxRotated && !tail->file.valid(); ++k) {
        const std::string candidate = k == 0 ? tail->name : rotated(tail->name, k);
        if (inode_at(dir->fd.get(), candidate) != start->inode) continue;
        tail->file = open_at(dir->fd.get(), candidate);
        if (tail->file.valid() && is_start(tail->file.get(), *start) &&
            lseek(tail->file.get(), static_cast<off_t>(start->offset), SEEK_SET) >= 0)
          break;
        tail->file = UniqueFd();
      }
      tail->lost_at_start = !tail->file.valid();
    }
    tail->from_oldest = start->inode == 0 || tail->lost_at_start;
    impl_->tails.push_back(std::move(tail));
  }
  impl_->directories.push_back(std::move(dir));
  return {};
}

bool LogFileFollow::drain(const Records& records, const Note& note) {
  // The events only say "something changed": every file is looked at.
  alignas(inotify_event) char events[4096];
  while (read(impl_->inotify.get(), events, sizeof events) > 0) {
  }
  bool done = true;
  for (auto& tail : impl_->tails) done = impl_->drain(*tail, records, note) && done;
  return done;
}

}  // namespace stackie::cli
