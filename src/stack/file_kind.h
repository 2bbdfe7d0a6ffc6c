// Whether a path is itself a regular file or a directory (a symlink is neither: it is not
// followed). One file per platform: file_kind_posix.cc (lstat), file_kind_windows.cc (a reparse
// point is neither).
#pragma once

#include <string>

namespace stackie {

bool is_file_or_directory_itself(const std::string& path);

}  // namespace stackie
