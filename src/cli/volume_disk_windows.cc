// The size of a volume tree through libuv (UTF-8 paths), links (symlinks, junctions: libuv's
// UV_DIRENT_LINK) counted as nothing and never entered. Removal waits for a remove_tree in base
// that opens each component below its parent's handle, as safe_open_windows.cc does: a
// junction planted in a volume must not turn `volume rm` into a removal elsewhere.
#include <uv.h>

#include "cli/volume_disk.h"

namespace stackie::cli {

uint64_t volume_bytes(const std::string& path) {
  uint64_t total = 0;
  uv_fs_t request;
  if (uv_fs_scandir(uv_default_loop(), &request, path.c_str(), 0, nullptr) >= 0) {
    uv_dirent_t entry;
    while (uv_fs_scandir_next(&request, &entry) != UV_EOF) {
      std::string child = path + "/" + entry.name;
      if (entry.type == UV_DIRENT_DIR) {
        total += volume_bytes(child);
      } else if (entry.type == UV_DIRENT_FILE) {
        uv_fs_t stat;
        if (uv_fs_lstat(uv_default_loop(), &stat, child.c_str(), nullptr) == 0)
          total += stat.statbuf.st_size;
        uv_fs_req_cleanup(&stat);
      }
    }
  }
  uv_fs_req_cleanup(&request);
  return total;
}

bool volume_removal_supported() {
  return false;
}

Status remove_volume_tree(const std::string& path) {
  return Error{UV_ENOSYS, "cannot remove " + path + ": not available on Windows yet"};
}

}  // namespace stackie::cli
