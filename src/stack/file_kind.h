// What the stack loader asks of the file system, one file per platform: file_kind_posix.cc
// (lstat, realpath), file_kind_windows.cc (reparse points, the final path of a handle).
#pragma once

#include <optional>
#include <string>

namespace stackie {

// Whether a path is itself a regular file or a directory (a symlink is neither: it is not
// followed; on Windows a reparse point is neither).
bool is_file_or_directory_itself(const std::string& path);
// Whether `path` itself is a symlink (on Windows: any reparse point, a junction too).
bool is_link(const std::string& path);
// Whether nothing at all is at `path` (a dangling symlink is something).
bool is_missing(const std::string& path);
// Which file `path` itself is (a link, not what it leads to): the same for every name of one
// file (hard links), another for a file made anew, even in a freed inode (on Linux the file
// handle adds the inode's generation; APFS does not reuse numbers; NTFS's index holds a
// sequence number). Timestamps would not do: a file's status-change time moves when another of
// its names is removed, and Windows lets its owner set it. nullopt when nothing is there; all
// zero when something is there that cannot be examined.
struct FileIdentity {
  unsigned long long device = 0, index = 0;
  std::string handle;  // hex of name_to_handle_at's handle, where the file system gives one
  bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> file_identity(const std::string& path);
// `path` with every symlink resolved; `path` itself when that fails.
std::string resolved_path(const std::string& path);

}  // namespace stackie
