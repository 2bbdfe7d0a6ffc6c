// What `stackie volume` needs of the disk: a tree's size and its removal. POSIX takes both from
// base/directories.h (volume_disk_posix.cc); Windows (volume_disk_windows.cc) has no
// remove_tree or disk_usage in base yet, so it sums file sizes itself and cannot remove.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace stackie::cli {

// The bytes under `path` (POSIX: allocated blocks, as du(1); Windows: file sizes).
uint64_t volume_bytes(const std::string& path);
// False where `volume rm` cannot remove a tree safely yet (Windows).
bool volume_removal_supported();
// rm -rf, never following a link.
Status remove_volume_tree(const std::string& path);

}  // namespace stackie::cli
