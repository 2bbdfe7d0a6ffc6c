#include "supervisor/block_storage.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <cerrno>

#include "base/directories.h"

namespace stackie {

namespace {

std::string record_path(const std::string& volume) {
  auto slash = volume.rfind('/');
  return volume.substr(0, slash + 1) + "." + volume.substr(slash + 1) + ".init";
}

// Written whole, synced and renamed into place: a crash leaves the old record or the new one.
Status write_record(const std::string& volume, const std::string& value) {
  std::string path = record_path(volume);
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return system_error(errno, "open " + temp);
  std::string text = value + "\n";
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  if (written && ::fsync(fd) != 0) {
    written = false;
    saved = errno;
  }
  ::close(fd);
  if (!written) {
    ::unlink(temp.c_str());
    return system_error(saved, "write " + temp);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) return system_error(errno, "rename " + temp);
  return {};
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

Status remove_tree(const std::string& path) {
  static thread_local int first_error = 0;
  first_error = 0;
  int rc = ::nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int, struct FTW*) {
        if (::remove(p) != 0 && first_error == 0) first_error = errno;
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
  if (rc != 0 && errno != ENOENT) return system_error(errno, "remove " + path);
  if (first_error != 0) return system_error(first_error, "remove " + path);
  return {};
}

}  // namespace

Status create_storage(const SandboxPolicy& policy) {
  std::vector<std::string> paths;
  for (const auto& bind : policy.read_write) paths.push_back(bind.source);
  if (!policy.host_tmp_dir.empty()) paths.push_back(policy.host_tmp_dir);
  for (const auto& path : paths) {
    if (::access(path.c_str(), F_OK) == 0) continue;
    STACKIE_TRY(make_directories(path));
  }
  return {};
}

std::vector<std::string> block_volumes(const ResolvedBlock& block,
                                       const std::string& storage_root) {
  std::vector<std::string> out;
  if (storage_root.empty()) return out;
  std::string prefix = storage_root + "/volumes/";
  for (const auto& bind : block.policy.read_write)
    if (bind.source.size() > prefix.size() && bind.source.compare(0, prefix.size(), prefix) == 0 &&
        bind.source.find("/../") == std::string::npos)
      out.push_back(bind.source);
  return out;
}

std::string init_record(const std::string& volume) {
  int fd = ::open(record_path(volume).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  char buf[32] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  std::string value(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

Result<std::vector<std::string>> prepare_storage(const ResolvedBlock& block,
                                                 const std::string& storage_root) {
  std::vector<std::string> notes;
  std::vector<std::string> volumes =
      block.init.empty() ? std::vector<std::string>{} : block_volumes(block, storage_root);
  for (const auto& volume : volumes) {
    if (init_record(volume) != "started") continue;
    if (Status removed = remove_tree(volume); !removed.ok())
      return Error{removed.error().code,
                   "the init of block " + block.name + " was interrupted and its volume " + volume +
                       " could not be emptied (" + removed.error().message +
                       "): delete it by hand (rm -rf '" + volume + "') and start it again"};
    notes.push_back("the last init was interrupted: " + volume + " emptied, init runs again");
  }
  std::vector<std::string> fresh;
  for (const auto& volume : volumes)
    if (is_empty(volume)) fresh.push_back(volume);
  STACKIE_TRY(create_storage(block.policy));
  for (const auto& volume : fresh) STACKIE_TRY(write_record(volume, "started"));
  return notes;
}

Status record_init_done(const ResolvedBlock& block, const std::string& storage_root) {
  for (const auto& volume : block_volumes(block, storage_root))
    if (init_record(volume) != "done") STACKIE_TRY(write_record(volume, "done"));
  return {};
}

}  // namespace stackie
