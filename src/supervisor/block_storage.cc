#include "supervisor/block_storage.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "base/directories.h"
#include "base/safe_open.h"

namespace stackie {

namespace {

// A path the user named, outside the storage root: created when missing, nothing more. Below
// a directory a block can write (a project, SandboxPolicy::link_free_roots) it is made from
// that directory with no link on the way: a `./x -> ~` the block planted must not make the
// daemon create directories in the user's home (the lockbox refuses the bind, but after).
Status create_users_path(const SandboxPolicy& policy, const std::string& path) {
  for (const auto& root : policy.link_free_roots) {
    auto below = path_below(root, path);
    if (!below || below->empty()) continue;
    if (::access(root.c_str(), F_OK) != 0) STACKIE_TRY(make_directories(root));  // the user's
    STACKIE_TRY_ASSIGN(dir, open_directory(root));
    auto made = make_directories_beneath(dir.get(), *below, root);
    if (!made.ok()) return made.error();
    return {};
  }
  if (::access(path.c_str(), F_OK) == 0) return {};
  return make_directories(path);
}

// The directory of a volume and its record's name in it: ".NAME.init" beside volumes/NAME.
std::pair<std::string, std::string> record_place(const std::string& volume) {
  auto slash = volume.rfind('/');
  return {volume.substr(0, slash), "." + volume.substr(slash + 1) + ".init"};
}

// Written whole, synced and renamed into place: a crash leaves the old record or the new one.
// Relative to the volumes directory and never through a link.
Status write_record(const std::string& volume, const std::string& value) {
  auto [dir_path, name] = record_place(volume);
  STACKIE_TRY_ASSIGN(dir, open_directory(dir_path));
  return replace_file_in(dir.get(), name, value + "\n", dir_path);
}

// Missing, or a directory with nothing in it.
bool is_empty(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return errno == ENOENT;
  bool empty = true;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

// Empties a volume of an interrupted init, from the storage root and never through a link.
Status remove_volume(const std::string& storage_root, const std::string& volume) {
  auto below = path_below(storage_root, volume);
  if (!below || below->empty()) return Error{-EINVAL, volume + " is not below " + storage_root};
  STACKIE_TRY_ASSIGN(root, open_storage_root(storage_root, Privacy::owned));
  return remove_tree_beneath(root.get(), *below, storage_root);
}

}  // namespace

Status prepare_block_storage(const SandboxPolicy& policy, const std::string& log_dir) {
  const std::string& root_path = policy.storage_root;
  if (root_path.empty()) {
    // No storage root (a hand-made policy): the paths as given.
    for (const auto& bind : policy.read_write) STACKIE_TRY(create_users_path(policy, bind.source));
    if (!policy.host_tmp_dir.empty()) STACKIE_TRY(create_users_path(policy, policy.host_tmp_dir));
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
      STACKIE_TRY(create_users_path(policy, policy.host_tmp_dir));
  }
  if (!log_dir.empty()) {
    if (auto logs = in_storage(log_dir))
      STACKIE_TRY(make_directories_beneath(root.get(), *logs, root_path));
  }
  for (const auto& bind : policy.read_write) {
    auto below = in_storage(bind.source);
    if (!below) {
      STACKIE_TRY(create_users_path(policy, bind.source));
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

std::vector<std::string> block_volumes(const ResolvedBlock& block) {
  std::vector<std::string> out;
  const std::string& root = block.policy.storage_root;
  if (root.empty()) return out;
  for (const auto& bind : block.policy.read_write) {
    auto below = path_below(root, bind.source);
    if (below && below->rfind("volumes/", 0) == 0 && below->size() > 8) out.push_back(bind.source);
  }
  return out;
}

std::string init_record(const std::string& volume) {
  auto [dir_path, name] = record_place(volume);
  auto dir = open_directory(dir_path);
  if (!dir.ok()) return "";
  auto file = open_file_in(dir->get(), name, O_RDONLY, dir_path);
  if (!file.ok()) return "";
  char buf[32] = {};
  int n = static_cast<int>(::read(file->get(), buf, sizeof buf - 1));
  std::string value(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

Result<std::vector<std::string>> prepare_storage(const ResolvedBlock& block,
                                                 const std::string& log_dir) {
  std::vector<std::string> notes;
  std::vector<std::string> volumes =
      block.init.empty() ? std::vector<std::string>{} : block_volumes(block);
  for (const auto& volume : volumes) {
    if (init_record(volume) != "started") continue;
    if (Status removed = remove_volume(block.policy.storage_root, volume); !removed.ok())
      return Error{removed.error().code,
                   "the init of block " + block.name + " was interrupted and its volume " + volume +
                       " could not be emptied (" + removed.error().message +
                       "): delete it by hand (rm -rf '" + volume + "') and start it again"};
    notes.push_back("the last init was interrupted: " + volume + " emptied, init runs again");
  }
  std::vector<std::string> fresh;
  for (const auto& volume : volumes)
    if (is_empty(volume)) fresh.push_back(volume);
  STACKIE_TRY(prepare_block_storage(block.policy, log_dir));
  for (const auto& volume : fresh) STACKIE_TRY(write_record(volume, "started"));
  return notes;
}

Status record_init_done(const ResolvedBlock& block) {
  for (const auto& volume : block_volumes(block))
    if (init_record(volume) != "done") STACKIE_TRY(write_record(volume, "done"));
  return {};
}

}  // namespace stackie
