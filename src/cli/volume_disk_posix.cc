#include "base/directories.h"
#include "cli/volume_disk.h"

namespace stackie::cli {

uint64_t volume_bytes(const std::string& path) {
  return disk_usage(path);
}

bool volume_removal_supported() {
  return true;
}

Status remove_volume_tree(const std::string& path) {
  return remove_tree(path);
}

}  // namespace stackie::cli
