#include "supervisor/log_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "base/directories.h"
#include "stack/settings.h"

namespace stackie {

RotatingFile::RotatingFile(int dir, std::string dir_shown, std::string name, uint64_t max_bytes,
                           int count)
    : dir_(dir),
      dir_shown_(std::move(dir_shown)),
      name_(std::move(name)),
      path_(dir_shown_ + "/" + name_),
      max_bytes_(max_bytes),
      count_(count < 1 ? 1 : count) {}

RotatingFile::RotatingFile(std::string path, uint64_t max_bytes, int count)
    : path_(std::move(path)), max_bytes_(max_bytes), count_(count < 1 ? 1 : count) {
  size_t slash = path_.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  dir_shown_ = dir;
  name_ = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  auto opened = open_directory(dir);
  if (opened.ok()) own_dir_ = std::move(*opened);
  dir_ = own_dir_.get();  // -1 when missing: open() reports it
}

RotatingFile::~RotatingFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool RotatingFile::still_in_directory() const {
  return still_named_in(fd_, dir_, name_);
}

void RotatingFile::use_directory(int dir) {
  dir_ = dir;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RotatingFile::remove_leftovers() {
  leftovers_removed_ = true;
  // They run on from NAME.count without a gap (rotations filled them in order), up to as many
  // as a setting may keep. Best effort: a file that stays is only shown again by a follower.
  for (int k = count_; k < kMostLogFiles; ++k) {
    const std::string leftover = name_ + "." + std::to_string(k);
    if (!open_file_in(dir_, leftover, O_RDONLY, dir_shown_).ok()) return;
    if (!remove_file_in(dir_, leftover, dir_shown_).ok()) return;
  }
}

Status RotatingFile::open() {
  if (dir_ < 0) return system_error(ENOENT, "open " + path_);
  if (!leftovers_removed_) remove_leftovers();
  STACKIE_TRY_ASSIGN(opened, open_file_in(dir_, name_, O_WRONLY | O_APPEND | O_CREAT, dir_shown_));
  fd_ = opened.release();
  size_ = file_size(fd_);
  return {};
}

Status RotatingFile::rotate() {
  if (count_ == 1) {
    // The open file itself: truncating by name would follow a link put in its place.
    STACKIE_TRY(truncate_open_file(fd_, path_));
    size_ = 0;
    return {};
  }
  ::close(fd_);
  fd_ = -1;
  // The oldest file, held open while the renames below take its name, so that its pages are
  // freed where release_ closes it, not in the rename.
  UniqueFd oldest;
  if (release_) {
    auto opened =
        open_file_in(dir_, name_ + "." + std::to_string(count_ - 1), O_RDONLY, dir_shown_);
    if (opened.ok()) oldest = std::move(*opened);
  }
  // NAME.(count-2) -> NAME.(count-1) … NAME -> NAME.1; the oldest falls off. rename_in moves
  // names within the directory and follows nothing.
  Status renamed_all;
  for (int i = count_ - 2; i >= 0 && renamed_all.ok(); --i) {
    std::string from = i == 0 ? name_ : name_ + "." + std::to_string(i);
    Status renamed =
        rename_in_removing_target(dir_, from, name_ + "." + std::to_string(i + 1), dir_shown_);
    if (!renamed.ok() && renamed.error().code != -ENOENT) renamed_all = renamed;
  }
  // Whether or not every rename took place: its last close is release_'s either way.
  if (oldest.valid()) release_(std::move(oldest));
  if (!renamed_all.ok()) return renamed_all;
  return open();
}

Status RotatingFile::append(std::string_view text) {
  if (fd_ >= 0 && !still_in_directory()) {
    ::close(fd_);
    fd_ = -1;
  }
  if (fd_ < 0) STACKIE_TRY(open());
  // `text` is whole records ("...\n"): write as many as fit, rotate, go on. A single record
  // larger than the limit gets a file of its own.
  while (!text.empty()) {
    size_t room = size_ < max_bytes_ ? static_cast<size_t>(max_bytes_ - size_) : 0;
    size_t take = text.size();
    if (take > room) {
      size_t cut = room > 0 ? text.rfind('\n', room - 1) : std::string_view::npos;
      if (cut != std::string_view::npos) {
        take = cut + 1;
      } else if (size_ > 0) {
        STACKIE_TRY(rotate());
        continue;
      } else {
        size_t end = text.find('\n');
        take = end == std::string_view::npos ? text.size() : end + 1;
      }
    }
    STACKIE_TRY(write_all(text.substr(0, take)));
    text.remove_prefix(take);
  }
  return {};
}

Status RotatingFile::write_all(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(errno, "write " + path_);
    size_ += static_cast<uint64_t>(n);
    text.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

namespace {

// The log directory, made (0700) and opened: below the storage root from its fd, never
// through a link, when `storage_root` holds it.
Result<UniqueFd> make_log_directory(const std::string& directory, const std::string& storage_root) {
  auto below = storage_root.empty() ? std::nullopt : path_below(storage_root, directory);
  if (below) {
    STACKIE_TRY_ASSIGN(root, open_storage_root(storage_root, Privacy::owned));
    return make_directories_beneath(root.get(), *below, storage_root);
  }
  STACKIE_TRY(make_directories(directory));
  return open_directory(directory);
}

}  // namespace

LogFiles::LogFiles(std::string directory, std::string storage_root, UniqueFd dir,
                   uint64_t max_bytes, int count)
    : directory_(std::move(directory)),
      storage_root_(std::move(storage_root)),
      directory_fd_(std::move(dir)),
      out_file_(directory_fd_.get(), directory_, "stdout.log", max_bytes, count),
      err_file_(directory_fd_.get(), directory_, "stderr.log", max_bytes, count) {}

Result<std::unique_ptr<LogFiles>> LogFiles::open(std::string directory, uint64_t max_bytes,
                                                 int count, std::string storage_root,
                                                 const ReleaseRotatedOut& release) {
  STACKIE_TRY_ASSIGN(dir, make_log_directory(directory, storage_root));
  std::unique_ptr<LogFiles> files(new LogFiles(std::move(directory), std::move(storage_root),
                                               std::move(dir), max_bytes, count));
  files->out_file_.release_rotated_out_with(release);
  files->err_file_.release_rotated_out_with(release);
  return files;
}

// The pool's four threads also resolve names (egress_proxy.cc): a few closes at a time at most,
// the others done at once, so that slow lookups cannot pile up deleted files held open, nor
// closes hold up lookups. Counted on the loop's thread, which alone calls this.
void close_on_thread_pool(uv_loop_t* loop, UniqueFd fd) {
  constexpr int kMostClosesQueued = 4;
  static int queued_closes = 0;
  if (queued_closes >= kMostClosesQueued) return;  // `fd` closes here
  auto* request = new uv_fs_t;
  const int number = fd.release();
  const int queued = uv_fs_close(loop, request, number, [](uv_fs_t* done) {
    --queued_closes;
    uv_fs_req_cleanup(done);
    delete done;
  });
  if (queued == 0) {
    ++queued_closes;
    return;
  }
  delete request;
  UniqueFd closed_here(number);
}

Status LogFiles::reopen_directory_if_gone() {
  if (directory_still_there(directory_fd_.get())) return {};
  STACKIE_TRY_ASSIGN(dir, make_log_directory(directory_, storage_root_));
  directory_fd_ = std::move(dir);
  out_file_.use_directory(directory_fd_.get());
  err_file_.use_directory(directory_fd_.get());
  return {};
}

LogFilesWritten LogFiles::write(std::string_view out, std::string_view err) {
  LogFilesWritten written;
  if (out.empty() && err.empty()) return written;
  auto outcome = [&written](const Status& status, std::string& standing) {
    if (status.ok()) {
      standing.clear();
      return;
    }
    ++written.failed_batches;
    if (written.first_error.empty()) written.first_error = status.error().message;
    standing = status.error().message;
  };
  // Neither batch can be written without the directory: one failure for both.
  if (Status reopened = reopen_directory_if_gone(); !reopened.ok()) {
    outcome(reopened, out_error_);
    err_error_ = out_error_;
  } else {
    if (!out.empty()) outcome(out_file_.append(out), out_error_);
    if (!err.empty()) outcome(err_file_.append(err), err_error_);
  }
  written.error_now = !out_error_.empty() ? out_error_ : err_error_;
  return written;
}

}  // namespace stackie
