#include "stack/writable_dirs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "base/fs_path.h"
#include "base/safe_open.h"
#include "stack/file_kind.h"
#include "stack/paths.h"

namespace stackie {

namespace {

bool is_shared(const ResolvedBlock& block) {
  return !block.shared_instance.empty();
}

// Below a storage root the lockbox confines paths already (SandboxPolicy::storage_root).
bool in_storage(const ResolvedBlock& block, const std::string& path) {
  const std::string& root = block.policy.storage_root;
  return !root.empty() && path_below(root, path).has_value();
}

// A file volume holds nothing below it: not a root (the lockbox opens roots as directories).
bool may_hold_paths(const std::string& path) {
  std::error_code error;
  return !std::filesystem::exists(path, error) || std::filesystem::is_directory(path, error);
}

// One inside another is reached from the outer one, so only the outer one is a root; each is
// kept under its resolved spelling too (/tmp/p is /private/tmp/p on macOS), so that a path
// written the other way is not taken for one outside every root.
std::vector<WritableDir> outermost(std::vector<WritableDir> all) {
  std::erase_if(all, [](const WritableDir& dir) { return !may_hold_paths(dir.path); });
  std::stable_sort(all.begin(), all.end(), [](const WritableDir& a, const WritableDir& b) {
    return a.path.size() < b.path.size();
  });
  std::vector<WritableDir> out;
  for (auto& dir : all) {
    bool inside = std::any_of(out.begin(), out.end(), [&](const WritableDir& kept) {
      return path_below(kept.path, dir.path).has_value();
    });
    if (!inside) out.push_back(std::move(dir));
  }
  const size_t spelled = out.size();
  for (size_t i = 0; i < spelled; ++i) {
    std::string resolved = path_for_comparison(out[i].path);
    if (resolved != out[i].path) out.push_back({resolved, out[i].writer});
  }
  return out;
}

// The first link on the way from `root` down to `path` (strictly below it), if any.
std::optional<std::string> link_on_the_way(const std::string& root, const std::string& path) {
  auto below = path_below(root, path);
  if (!below || below->empty()) return std::nullopt;
  std::string walked = root == "/" ? "" : root;
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

std::string host_dir(const std::string& text, const std::string& base) {
  return normalize_path(is_host_absolute_path(text) ? text : base + "/" + text);
}

}  // namespace

std::vector<WritableDir> declared_writable_dirs(const StackFile& stack) {
  std::vector<WritableDir> out;
  for (const auto& decl : stack.blocks) {
    const std::string& base = decl.dir.empty() ? stack.dir : decl.dir;
    if (decl.path) out.push_back({host_dir(decl.path->text, base), decl.name});
    for (const auto& volume : decl.volumes)
      if (volume.host_path && !volume.read_only && volume.project_volume.empty())
        out.push_back({host_dir(volume.host_path->text, base), decl.name});
  }
  return out;
}

std::optional<LinkBelow> link_below(const std::vector<WritableDir>& dirs, const std::string& path) {
  for (const auto& dir : dirs)
    if (auto link = link_on_the_way(dir.path, path)) return LinkBelow{*link, dir};
  return std::nullopt;
}

Result<std::vector<WritableDir>> confine_writable_dirs(
    std::vector<ResolvedBlock>& blocks, const std::vector<const StackBlockDecl*>& decls,
    std::vector<WritableDir> dirs, const std::vector<DecisivePath>& decisive) {
  for (const auto& block : blocks) {
    if (!block.sandboxed || is_shared(block)) continue;
    for (const auto& bind : block.policy.read_write)
      if (!in_storage(block, bind.source)) dirs.push_back({bind.source, block.name});
  }
  const std::vector<WritableDir> roots = outermost(std::move(dirs));
  for (const auto& path : decisive)
    if (auto found = link_below(roots, path.path))
      return error_at(path.where,
                      path.path + " is reached through the symbolic link " + found->link + ", in " +
                          found->dir.path + ", which block '" + found->dir.writer +
                          "' can write: it could swap the link for one of its own and decide "
                          "how the next up runs; put the file or directory itself in place of "
                          "the link");
  for (size_t i = 0; i < blocks.size(); ++i) {
    ResolvedBlock& block = blocks[i];
    if (!block.sandboxed || is_shared(block)) continue;
    for (const auto& root : roots) block.policy.link_free_roots.push_back(root.path);
    const StackBlockDecl& decl = *decls[i];
    for (const bool written : {true, false})
      for (const auto& bind : written ? block.policy.read_write : block.policy.read_only) {
        auto found = link_below(roots, bind.source);
        if (!found) continue;
        const bool project = decl.path.has_value() && bind.source == block.policy.working_dir;
        return error_at(project ? decl.path->where : decl.where,
                        "block '" + block.name + "' would be given " + bind.source +
                            " through the symbolic link " + found->link + ", in " +
                            found->dir.path + ", which block '" + found->dir.writer +
                            "' can write: a link there is never followed (a block may have "
                            "planted it); if you made it, name the path it points to instead");
      }
  }
  return roots;
}

}  // namespace stackie
