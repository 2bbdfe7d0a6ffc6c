#include "supervisor/state_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "base/json.h"
#include "base/safe_open.h"

namespace stackie {

namespace {

constexpr int kStateVersion = 1;
// Each stack keeps its client's environment subset; many stacks may outgrow the IPC's 1 MiB.
constexpr JsonLimits kStateLimits{.max_bytes = std::size_t{64} << 20, .max_depth = 8};

}  // namespace

std::string state_to_json(const std::vector<StackRecord>& stacks) {
  Json list = Json::array();
  for (const auto& record : stacks) {
    Json unsandboxed = Json::array();
    for (const auto& block : record.unsandboxed) unsandboxed.push_back(block);
    Json env = Json::object();
    for (const auto& [key, value] : record.request.env) env.set(key, value);
    Json item = Json::object({
        {"name", record.name},
        {"file", record.request.file},
        {"cwd", record.request.cwd},
        {"env", std::move(env)},
        {"ephemeral", record.request.ephemeral},
        {"no_sandbox", record.request.no_sandbox},
        {"unsandboxed", std::move(unsandboxed)},
    });
    if (!record.request.project_name.empty()) item.set("project_name", record.request.project_name);
    for (const auto* names : {&record.request.blocks, &record.request.profiles}) {
      if (names->empty()) continue;
      Json array = Json::array();
      for (const auto& name : *names) array.push_back(name);
      item.set(names == &record.request.blocks ? "blocks" : "profiles", std::move(array));
    }
    list.push_back(std::move(item));
  }
  return to_json_line(Json::object({{"v", kStateVersion}, {"stacks", std::move(list)}}));
}

Result<std::vector<StackRecord>> state_from_json(const std::string& text) {
  Result<Json> parsed = parse_json(text, kStateLimits);
  if (!parsed.ok()) return Error{UV_EINVAL, "state file: " + parsed.error().message};
  const Json& root = *parsed;
  if (!root.is_object()) return Error{UV_EINVAL, "state file: not a JSON object"};
  if (root["v"] != Json(kStateVersion)) return Error{UV_EINVAL, "state file: unsupported version"};
  const Json& list = root["stacks"];
  if (!list.is_array()) return Error{UV_EINVAL, "state file: no stacks array"};
  std::vector<StackRecord> out;
  for (const Json& item : list.as_array()) {
    StackRecord record;
    record.name = item["name"].string_or("");
    record.request.file = item["file"].string_or("");
    record.request.cwd = item["cwd"].string_or("");
    record.request.ephemeral = item["ephemeral"].bool_or(false);
    record.request.no_sandbox = item["no_sandbox"].bool_or(false);
    record.request.project_name = item["project_name"].string_or("");
    if (const Json& env = item["env"]; env.is_object()) {
      for (const auto& [key, value] : env.as_object())
        if (value.is_string()) record.request.env.emplace_back(key, value.as_string());
    }
    for (auto [key, names] : {std::pair{"blocks", &record.request.blocks},
                              std::pair{"profiles", &record.request.profiles}})
      if (const Json& given = item[key]; given.is_array())
        for (const Json& name : given.as_array())
          if (name.is_string()) names->push_back(name.as_string());
    if (const Json& unsandboxed = item["unsandboxed"]; unsandboxed.is_array()) {
      for (const Json& block : unsandboxed.as_array())
        if (block.is_string()) record.unsandboxed.push_back(block.as_string());
    }
    if (record.name.empty() || record.request.file.empty())
      return Error{UV_EINVAL, "state file: a stack without name or file"};
    out.push_back(std::move(record));
  }
  return out;
}

namespace {

// The directory of `path` and its last component.
std::pair<std::string, std::string> split_path(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

std::vector<std::pair<std::string, std::string>> environment_to_keep(
    const std::vector<std::pair<std::string, std::string>>& env,
    const std::vector<std::string>& referenced) {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& [name, value] : env) {
    bool wanted = name.rfind("STACKIE_", 0) == 0 ||
                  std::find(referenced.begin(), referenced.end(), name) != referenced.end();
    if (wanted) kept.emplace_back(name, value);
  }
  return kept;
}

Result<std::vector<StackRecord>> read_state_file(const std::string& path) {
  auto [dir_path, name] = split_path(path);
  auto dir = open_directory(dir_path);
  if (!dir.ok() && dir.error().code == -ENOENT) return std::vector<StackRecord>{};
  if (!dir.ok()) return dir.error();
  auto file = open_file_in(dir->get(), name, O_RDONLY, dir_path);
  if (!file.ok()) {
    if (file.error().code == -ENOENT) return std::vector<StackRecord>{};
    return file.error();
  }
  std::string text;
  char buf[8192];
  int n;
  while ((n = static_cast<int>(::read(file->get(), buf, sizeof buf))) > 0)
    text.append(buf, static_cast<size_t>(n));
  auto parsed = state_from_json(text);
  if (!parsed.ok()) return Error{parsed.error().code, path + ": " + parsed.error().message};
  return parsed;
}

Status write_state_file(const std::string& path, const std::vector<StackRecord>& stacks) {
  // Relative to the home directory, never through a link: a state.json.tmp planted as a
  // symlink is removed, never followed, and the rename stays in the directory.
  auto [dir_path, name] = split_path(path);
  STACKIE_TRY_ASSIGN(dir, open_directory(dir_path));
  return replace_file_in(dir.get(), name, state_to_json(stacks), dir_path);
}

}  // namespace stackie
