#include "supervisor/block_storage.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "base/directories.h"
#include "base/safe_open.h"

namespace stackie {

namespace {

// A path the user named, outside the storage root: created when missing, nothing more.
Status create_users_path(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0) return {};
  return make_directories(path);
}

}  // namespace

Status prepare_block_storage(const SandboxPolicy& policy, const std::string& log_dir) {
  const std::string& root_path = policy.storage_root;
  if (root_path.empty()) {
    // No storage root (a hand-made policy): the paths as given.
    for (const auto& bind : policy.read_write) STACKIE_TRY(create_users_path(bind.source));
    if (!policy.host_tmp_dir.empty()) STACKIE_TRY(create_users_path(policy.host_tmp_dir));
    return {};
  }
  STACKIE_TRY_ASSIGN(root, open_storage_root(root_path, Privacy::owned));
  auto in_storage = [&](const std::string& path) { return path_below(root_path, path); };

  std::optional<std::string> tmp;
  if (!policy.host_tmp_dir.empty()) {
    tmp = in_storage(policy.host_tmp_dir);
    if (tmp)
      STACKIE_TRY(make_directories_beneath(root.get(), *tmp, root_path));
    else
      STACKIE_TRY(create_users_path(policy.host_tmp_dir));
  }
  if (!log_dir.empty()) {
    if (auto logs = in_storage(log_dir))
      STACKIE_TRY(make_directories_beneath(root.get(), *logs, root_path));
  }
  for (const auto& bind : policy.read_write) {
    auto below = in_storage(bind.source);
    if (!below) {
      STACKIE_TRY(create_users_path(bind.source));
      continue;
    }
    bool runtime = tmp && !tmp->empty() && below->size() > tmp->size() &&
                   below->compare(0, tmp->size() + 1, *tmp + "/") == 0;
    if (runtime) {
      // A runtime dir is scratch: made afresh on each start. A link in its place is not
      // removed quietly: it is refused, so the user sees that something planted it.
      auto existing = open_beneath(root.get(), *below, kOpenPathOnly, root_path);
      if (!existing.ok() && existing.error().code != -ENOENT) return existing.error();
      STACKIE_TRY(remove_tree_beneath(root.get(), *below, root_path));
    }
    STACKIE_TRY(make_directories_beneath(root.get(), *below, root_path));
  }
  return {};
}

}  // namespace stackie
