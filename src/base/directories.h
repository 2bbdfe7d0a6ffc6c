// Creating directories on the host: the one `mkdir -p` of the project.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace stackie {

// mkdir -p: every directory it creates is 0700 (Stackie's state is private to the user); an
// existing directory, and its mode, are left as they are.
Status make_directories(const std::string& path);

// rm -rf of `path` (symlinks are removed, never followed). A missing path is fine.
Status remove_tree(const std::string& path);

// The disk space under `path` in bytes (allocated blocks, as du(1) counts), 0 when missing.
uint64_t disk_usage(const std::string& path);

// Replaces `path` with `text` all at once (a temp file beside it, fsync, rename): a reader
// sees the old file or the new one, never half of one. The file is created with `mode`.
Status write_file_atomically(const std::string& path, const std::string& text, int mode = 0600);

}  // namespace stackie
