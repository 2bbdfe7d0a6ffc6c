#include "stack/substacks.h"

#include <algorithm>

#include "base/fs_path.h"
#include "base/safe_open.h"
#include "stack/compose_file.h"
#include "stack/file_kind.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

// A hostile file could include a thousand others, or nest without end through distinct files:
// far more than any project composes.
constexpr size_t kMaxDepth = 16;
constexpr size_t kMaxFiles = 64;

bool is_directory_itself(const std::string& path) {
  return is_file_or_directory_itself(path) && is_file_or_directory_itself(path + "/.");
}

YamlNode* find_entry(YamlNode& map, const std::string& key) {
  for (auto& [name, value] : map.entries)
    if (name.text == key) return &value;
  return nullptr;
}

// `{blocks: {BLOCK: {FIELD: VALUE}}}` over the substack's YAML: each field given replaces the
// block's own (as a whole: `vars` given is the block's whole `vars`), a field it lacks is added.
Status apply_overrides(YamlNode& root, const YamlNode& overrides, const std::string& shown) {
  const YamlNode* wanted = overrides.find("blocks");
  if (wanted == nullptr || wanted->is_null()) return {};
  STACKIE_TRY(expect_kind(*wanted, YamlNode::Kind::map, "blocks"));
  // A file of another shape is parse_stack_file's to report, with its own positions.
  if (!root.is_map() || root.entries.size() != 1 || !root.entries[0].second.is_map()) return {};
  YamlNode* blocks = find_entry(root.entries[0].second, "blocks");
  std::vector<std::string> names;
  if (blocks != nullptr && blocks->is_map())
    for (const auto& [name, body] : blocks->entries) names.push_back(name.text);
  for (const auto& [name, fields] : wanted->entries) {
    YamlNode* body =
        blocks != nullptr && blocks->is_map() ? find_entry(*blocks, name.text) : nullptr;
    if (body == nullptr) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      return error_at(name.where,
                      "substack '" + shown + "' has no block '" + name.text +
                          "' to override (its blocks: " + (known.empty() ? "none" : known) + ")" +
                          did_you_mean(name.text, names));
    }
    if (fields.is_null()) continue;
    STACKIE_TRY(expect_kind(fields, YamlNode::Kind::map, "blocks." + name.text));
    if (body->is_null()) {
      body->kind = YamlNode::Kind::map;
      body->where = name.where;
    }
    if (!body->is_map()) continue;  // parse_stack_file says what is wrong with it
    for (const auto& [field, value] : fields.entries) {
      if (YamlNode* existing = find_entry(*body, field.text))
        *existing = value;
      else
        body->entries.emplace_back(field, value);
    }
  }
  return {};
}

class Composer {
 public:
  Composer(StackFile& top, std::vector<std::string>& warnings)
      : top_(top), warnings_(warnings), project_dir_(top.dir) {}

  Status include_all(const StackFile& from, std::vector<std::string>& chain) {
    for (const auto& decl : from.substacks) STACKIE_TRY(include(from, decl, chain));
    return {};
  }

 private:
  // "billing/stackie-stack.yml": below the project directory, as the user wrote the tree.
  std::string shown(const std::string& file) const {
    auto below = path_below(project_dir_, file);
    return below && !below->empty() ? *below : file;
  }

  Result<std::string> locate(const StackFile& from, const YamlNode& node) const {
    const std::string& text = node.text;
    std::string candidate =
        normalize_path(is_host_absolute_path(text) ? text : from.dir + "/" + text);
    auto outside = [&] {
      return error_at(node.where, "substack '" + text + "' is outside the project directory " +
                                      project_dir_ + " (" + candidate + ")");
    };
    if (!path_below(project_dir_, candidate)) return outside();
    std::string file = candidate;
    if (is_directory_itself(candidate)) {
      file.clear();
      for (const auto& name : stack_file_names())
        if (!is_missing(join_path(candidate, name))) {
          file = join_path(candidate, name);
          break;
        }
      if (file.empty())
        return error_at(node.where, "substack '" + text + "': no stack file in " + candidate +
                                        " (looked for stackie-stack.yml, stackie-stack.yaml, "
                                        "stackie.yml, stackie.yaml)");
    } else if (is_missing(candidate)) {
      return error_at(node.where, "substack '" + text + "' not found (" + candidate + ")");
    }
    auto below = path_below(project_dir_, file);
    if (!below || below->empty()) return outside();
    // No symbolic link from the project directory down to the file, the file included: the
    // path as written is the file that is read.
    std::string expected = join_path(resolved_path(project_dir_), *below);
    std::string real = resolved_path(file);
    if (real != expected)
      return error_at(node.where, "substack '" + text + "' goes through a symbolic link (" + file +
                                      " is " + real +
                                      "); a substack must be a plain file inside the project");
    if (!is_file_or_directory_itself(file) || is_directory_itself(file))
      return error_at(node.where, "substack '" + text + "' is not a regular file (" + file + ")");
    return file;
  }

  Status include(const StackFile& from, const SubstackDecl& decl, std::vector<std::string>& chain) {
    STACKIE_TRY_ASSIGN(file, locate(from, decl.path));
    if (std::find(chain.begin(), chain.end(), file) != chain.end()) {
      std::string cycle;
      auto start = std::find(chain.begin(), chain.end(), file);
      for (auto it = start; it != chain.end(); ++it) cycle += shown(*it) + " -> ";
      return error_at(decl.path.where, "substack cycle: " + cycle + shown(file));
    }
    if (chain.size() > kMaxDepth)
      return error_at(decl.path.where,
                      "substacks nested deeper than " + std::to_string(kMaxDepth) + " files");
    if (++files_ > kMaxFiles)
      return error_at(decl.path.where,
                      "more than " + std::to_string(kMaxFiles) + " substacks in one stack");
    STACKIE_TRY_ASSIGN(root, parse_yaml_file(file));
    if (looks_like_compose(root))
      return error_at(decl.path.where, "substack '" + decl.path.text +
                                           "' is a Compose file; a substack is a stack file "
                                           "(`stackie convert -f " +
                                           shown(file) + "` writes one)");
    if (decl.overrides) STACKIE_TRY(apply_overrides(root, *decl.overrides, shown(file)));
    STACKIE_TRY_ASSIGN(sub, parse_stack_file(root, file));
    if (sub.storage_root)
      warnings_.push_back(compose_warning(sub.storage_root->where,
                                          "a substack's storage_root is not used: the blocks of '" +
                                              shown(file) +
                                              "' keep their data in the storage of the "
                                              "stack that includes it"));
    top_.substack_files.push_back(file);
    for (auto& source : sub.sources) top_.sources.push_back(source);
    for (auto& block : sub.blocks) {
      auto same = std::find_if(top_.blocks.begin(), top_.blocks.end(),
                               [&](const StackBlockDecl& b) { return b.name == block.name; });
      if (same != top_.blocks.end())
        return error_at(block.where, "block '" + block.name + "' of substack '" + shown(file) +
                                         "' is already in the stack (" +
                                         format_location(same->where) + ")");
      top_.blocks.push_back(std::move(block));
    }
    chain.push_back(file);
    Status nested = include_all(sub, chain);
    chain.pop_back();
    return nested;
  }

  StackFile& top_;
  std::vector<std::string>& warnings_;
  std::string project_dir_;
  size_t files_ = 0;
};

}  // namespace

Status compose_substacks(StackFile& stack, std::vector<std::string>& warnings) {
  if (stack.substacks.empty()) return {};
  Composer composer(stack, warnings);
  std::vector<std::string> chain = {stack.file};
  StackFile declared;  // the top file's own declarations: `stack` grows while they are read
  declared.dir = stack.dir;
  declared.substacks = stack.substacks;
  STACKIE_TRY(composer.include_all(declared, chain));
  if (stack.blocks.empty())
    return error_at(stack.where, "stack '" + stack.name + "' has no blocks (nor its substacks)");
  return {};
}

}  // namespace stackie
