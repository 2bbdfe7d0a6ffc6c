// Opening, creating and removing paths below a directory we trust, without following anything
// a block could have planted there (issue 14). A block writes into its own storage (its /tmp,
// its volumes); if the daemon or the lockbox later followed a symlink it left there, the block
// would read or write the user's files with the user's rights. So every path under a storage
// root is resolved from the root's directory fd: no symlink anywhere on the way, no ".." out of
// it. openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it (Linux 5.6), else a
// walk one component at a time with O_NOFOLLOW; a refusal names the offending path. On Windows
// (safe_open_windows.cc) the planted things are reparse points, refused the same way.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie {

// Open for lookup only (O_PATH) where the system has it; a plain read-only open elsewhere.
#ifdef O_PATH
inline constexpr int kOpenPathOnly = O_PATH;
#else
inline constexpr int kOpenPathOnly = O_RDONLY;
#endif

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// `path` relative to `root` when it lies strictly below it ("a/b" for root "/s" and path
// "/s/a/b"), "" when they are equal, nullopt when it is elsewhere. Lexical: both are normalised
// absolute paths (base/fs_path.h normalize_path).
std::optional<std::string> path_below(const std::string& root, const std::string& path);

// How private a storage root must be.
enum class Privacy {
  owned,    // owned by us, not writable by group or others (the persistent storage root)
  private_  // owned by us, no access at all for group or others (ephemeral storage)
};

// The storage root `path` (chosen by the user's own settings, so its own path is trusted as
// given), created 0700 with its parents when missing, opened as a directory and checked: owned
// by the effective uid and private enough, else refused with a message naming it. Another
// local user's pre-made directory never becomes our storage.
Result<UniqueFd> open_storage_root(const std::string& path, Privacy privacy);

// Opens `relative` below the directory `dir` with `flags` (O_CLOEXEC added): no component may
// be a symlink, ".." or absolute. `dir_shown` is the path of `dir`, for messages (each names
// the full path, down to the component refused).
Result<UniqueFd> open_beneath(int dir, const std::string& relative, int flags,
                              const std::string& dir_shown);

// mkdir -p of `relative` below `dir`: missing directories are created 0700, every existing
// component must be a real directory (a symlink is refused, naming it). Returns the last
// directory, opened O_DIRECTORY.
Result<UniqueFd> make_directories_beneath(int dir, const std::string& relative,
                                          const std::string& dir_shown);

// Removes `relative` below `dir` and everything under it, never following a symlink (a link
// is removed, not what it points to), never leaving `dir`. Missing is not an error.
Status remove_tree_beneath(int dir, const std::string& relative, const std::string& dir_shown);

// Opens the regular file `name` directly in `dir` with `flags` (with O_CREAT: mode 0600), never
// through a symlink: a log or state file replaced by a link (or a FIFO) is refused, not followed.
Result<UniqueFd> open_file_in(int dir, const std::string& name, int flags,
                              const std::string& dir_shown);

// The directory `path` (a trusted one, the user's: opened as named), for the calls below.
Result<UniqueFd> open_directory(const std::string& path);

// Renames `from` to `to`, both names directly in `dir`, replacing `to`; a link is renamed as
// itself, never followed.
Status rename_in(int dir, const std::string& from, const std::string& to,
                 const std::string& dir_shown);

// As rename_in, but a `to` that exists is removed just before, so that the rename replaces
// nothing: ext4 writes a file's data out at once when a rename replaces another file (its
// auto_da_alloc, for programs that save a file by renaming a new one over it), which log
// rotation does not need; for the daemon it was 10 MiB of writeback in its loop's thread per
// rotation (issue 25). Where the system cannot rename without replacing, exactly rename_in.
Status rename_in_removing_target(int dir, const std::string& from, const std::string& to,
                                 const std::string& dir_shown);

// Removes the file (or link, as itself) `name` directly in `dir`; missing is not an error.
Status remove_file_in(int dir, const std::string& name, const std::string& dir_shown);

// Whether the open file `fd` is still the entry `name` in `dir` (not renamed away, removed or
// replaced): a log whose file was moved or deleted under it reopens its name.
bool still_named_in(int fd, int dir, const std::string& name);

// Whether the directory `dir` still has a name (it was not removed while held open).
bool directory_still_there(int dir);

// The open file `fd` (named `shown`) is the user's alone: owned by us, no access for group or
// others. On Windows: owned by the user's SID, and no ACE lets anyone but the user, SYSTEM and
// Administrators (who can read every file anyway) read it or change its DACL. Under the default
// home in the profile files inherit just that, but a STACKIE_HOME elsewhere (C:\stackie
// inherits C:\'s Authenticated Users) admits others. A secret such as the API token is refused
// when this fails.
Status check_private_file(int fd, const std::string& shown);

// Makes the open file `fd`, just created, the user's alone whatever its directory passes on:
// mode 0600, or on Windows a protected DACL of the user and SYSTEM.
Status make_private_file(int fd, const std::string& shown);

// The size of the open file `fd`, 0 if unknown.
uint64_t file_size(int fd);

// Truncates the open file `fd` to nothing (by its descriptor: never a name that could have
// been replaced by a link).
Status truncate_open_file(int fd, const std::string& shown);

// Writes all of `text` to `fd` and flushes it to the disk.
Status write_and_sync(int fd, std::string_view text, const std::string& shown);

// Makes `text` the content of the file `name` directly in `dir`, whole or not at all: written
// to NAME.tmp (a leftover, or a link planted under that name, removed first and the file
// created exclusively), synced, and renamed over NAME. A crash leaves the old file or the new
// one; nothing is ever written through a link. The daemon's pid, state and volume records.
Status replace_file_in(int dir, const std::string& name, std::string_view text,
                       const std::string& dir_shown);

// Tests: true makes every lookup take the portable walk, as on a kernel without openat2.
void force_walk_for_testing(bool walk);

}  // namespace stackie
