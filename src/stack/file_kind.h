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
// When `path` itself (a link, not what it leads to) last changed status, in nanoseconds since
// the Unix epoch: made, written, renamed, linked, touched. No process sets it to the past
// (utimensat sets the other two times), so it tells whether a file was made before or after a
// moment. nullopt when nothing is there.
std::optional<long long> status_change_ns(const std::string& path);
// `path` with every symlink resolved; `path` itself when that fails.
std::string resolved_path(const std::string& path);

}  // namespace stackie
