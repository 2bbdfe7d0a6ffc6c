#include "stack/writable_dirs.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "base/safe_open.h"
#include "stack/file_kind.h"

namespace stackie {

namespace {

struct WritableDir {
  std::string path;
  std::string writer;  // a block that can write it
};

bool is_shared(const ResolvedBlock& block) {
  return !block.shared_instance.empty();
}

// Below a storage root the lockbox confines paths already (SandboxPolicy::storage_root).
bool in_storage(const ResolvedBlock& block, const std::string& path) {
  const std::string& root = block.policy.storage_root;
  return !root.empty() && path_below(root, path).has_value();
}

// The outermost directories written by a sandboxed block: one inside another is reached from
// the outer one, so only the outer one is a root.
std::vector<WritableDir> writable_dirs(const std::vector<ResolvedBlock>& blocks) {
  std::vector<WritableDir> all;
  for (const auto& block : blocks) {
    if (!block.sandboxed || is_shared(block)) continue;
    for (const auto& bind : block.policy.read_write)
      if (!in_storage(block, bind.source)) all.push_back({bind.source, block.name});
  }
  std::stable_sort(all.begin(), all.end(), [](const WritableDir& a, const WritableDir& b) {
    return a.path.size() < b.path.size();
  });
  std::vector<WritableDir> outermost;
  for (auto& dir : all) {
    bool inside = std::any_of(outermost.begin(), outermost.end(), [&](const WritableDir& kept) {
      return path_below(kept.path, dir.path).has_value();
    });
    if (!inside) outermost.push_back(std::move(dir));
  }
  return outermost;
}

// The first link on the way from `root` down to `path` (strictly below it), if any.
std::optional<std::string> link_on_the_way(const std::string& root, const std::string& path) {
  auto below = path_below(root, path);
  if (!below || below->empty()) return std::nullopt;
  std::string walked = root;
  size_t start = 0;
  while (start <= below->size()) {
    size_t end = below->find('/', start);
    if (end == std::string::npos) end = below->size();
    walked += "/" + below->substr(start, end - start);
    if (is_link(walked)) return walked;
    if (is_missing(walked)) return std::nullopt;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

Status confine_writable_dirs(std::vector<ResolvedBlock>& blocks,
                             const std::vector<const StackBlockDecl*>& decls) {
  const std::vector<WritableDir> roots = writable_dirs(blocks);
  for (size_t i = 0; i < blocks.size(); ++i) {
    ResolvedBlock& block = blocks[i];
    if (!block.sandboxed || is_shared(block)) continue;
    for (const auto& root : roots) block.policy.link_free_roots.push_back(root.path);
    const StackBlockDecl& decl = *decls[i];
    for (const bool written : {true, false})
      for (const auto& bind : written ? block.policy.read_write : block.policy.read_only)
        for (const auto& root : roots) {
          auto link = link_on_the_way(root.path, bind.source);
          if (!link) continue;
          const bool project = decl.path.has_value() && bind.source == block.policy.working_dir;
          return error_at(project ? decl.path->where : decl.where,
                          "block '" + block.name + "' would be given " + bind.source +
                              " through the symbolic link " + *link + ", in " + root.path +
                              ", which block '" + root.writer +
                              "' can write: a link there is never followed (a block may have "
                              "planted it); if you made it, name the directory it points to");
        }
  }
  return {};
}

}  // namespace stackie
