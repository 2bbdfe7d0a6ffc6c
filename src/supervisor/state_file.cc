#include "supervisor/state_file.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "base/safe_open.h"

namespace stackie {

namespace {

constexpr int kStateVersion = 1;

using JsonPtr = std::unique_ptr<cJSON, decltype(&cJSON_Delete)>;

std::string string_field(const cJSON* object, const char* name) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : "";
}

bool bool_field(const cJSON* object, const char* name) {
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(object, name));
}

}  // namespace

std::string state_to_json(const std::vector<StackRecord>& stacks) {
  JsonPtr root(cJSON_CreateObject(), cJSON_Delete);
  cJSON_AddNumberToObject(root.get(), "v", kStateVersion);
  cJSON* list = cJSON_AddArrayToObject(root.get(), "stacks");
  for (const auto& record : stacks) {
    cJSON* item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", record.name.c_str());
    cJSON_AddStringToObject(item, "file", record.request.file.c_str());
    cJSON_AddStringToObject(item, "cwd", record.request.cwd.c_str());
    cJSON* env = cJSON_AddObjectToObject(item, "env");
    for (const auto& [key, value] : record.request.env)
      cJSON_AddStringToObject(env, key.c_str(), value.c_str());
    cJSON_AddBoolToObject(item, "ephemeral", record.request.ephemeral);
    cJSON_AddBoolToObject(item, "no_sandbox", record.request.no_sandbox);
    cJSON* unsandboxed = cJSON_AddArrayToObject(item, "unsandboxed");
    for (const auto& block : record.unsandboxed)
      cJSON_AddItemToArray(unsandboxed, cJSON_CreateString(block.c_str()));
    cJSON_AddItemToArray(list, item);
  }
  char* text = cJSON_Print(root.get());
  std::string out = text ? text : "{}";
  cJSON_free(text);
  return out + "\n";
}

Result<std::vector<StackRecord>> state_from_json(const std::string& text) {
  JsonPtr root(cJSON_ParseWithLength(text.data(), text.size()), cJSON_Delete);
  if (!root || !cJSON_IsObject(root.get()))
    return Error{UV_EINVAL, "state file: not a JSON object"};
  const cJSON* version = cJSON_GetObjectItemCaseSensitive(root.get(), "v");
  if (!cJSON_IsNumber(version) || version->valueint != kStateVersion)
    return Error{UV_EINVAL, "state file: unsupported version"};
  const cJSON* list = cJSON_GetObjectItemCaseSensitive(root.get(), "stacks");
  if (!cJSON_IsArray(list)) return Error{UV_EINVAL, "state file: no stacks array"};
  std::vector<StackRecord> out;
  const cJSON* item;
  cJSON_ArrayForEach(item, list) {
    StackRecord record;
    record.name = string_field(item, "name");
    record.request.file = string_field(item, "file");
    record.request.cwd = string_field(item, "cwd");
    record.request.ephemeral = bool_field(item, "ephemeral");
    record.request.no_sandbox = bool_field(item, "no_sandbox");
    const cJSON* env = cJSON_GetObjectItemCaseSensitive(item, "env");
    const cJSON* var;
    cJSON_ArrayForEach(var, env) {
      if (cJSON_IsString(var)) record.request.env.emplace_back(var->string, var->valuestring);
    }
    const cJSON* unsandboxed = cJSON_GetObjectItemCaseSensitive(item, "unsandboxed");
    const cJSON* block;
    cJSON_ArrayForEach(block, unsandboxed) {
      if (cJSON_IsString(block)) record.unsandboxed.emplace_back(block->valuestring);
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::vector<StackRecord>{};
    return system_error(errno, "open " + path);
  }
  std::string text;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  auto parsed = state_from_json(text);
  if (!parsed.ok()) return Error{parsed.error().code, path + ": " + parsed.error().message};
  return parsed;
}

Status write_state_file(const std::string& path, const std::vector<StackRecord>& stacks) {
  // Relative to the home directory, never through a link: a state.json.tmp planted as a
  // symlink is refused rather than followed, and the rename stays in the directory.
  auto [dir_path, name] = split_path(path);
  UniqueFd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return system_error(errno, "open " + dir_path);
  std::string temp_name = name + ".tmp";
  std::string temp = path + ".tmp";
  // A leftover temp file (or whatever took its name) goes first: unlinking a link removes the
  // link, and the new file is created exclusively, so nothing stale is ever written through.
  if (::unlinkat(dir.get(), temp_name.c_str(), 0) != 0 && errno != ENOENT)
    return system_error(errno, "remove " + temp);
  STACKIE_TRY_ASSIGN(file,
                     open_file_in(dir.get(), temp_name, O_WRONLY | O_CREAT | O_EXCL, dir_path));
  if (::fchmod(file.get(), 0600) != 0) return system_error(errno, "chmod " + temp);
  std::string text = state_to_json(stacks);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(file.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(errno, "write " + temp);
    done += static_cast<size_t>(n);
  }
  if (::fsync(file.get()) != 0 || ::close(file.release()) != 0)
    return system_error(errno, "sync " + temp);
  if (::renameat(dir.get(), temp_name.c_str(), dir.get(), name.c_str()) != 0)
    return system_error(errno, "rename " + temp);
  return {};
}

}  // namespace stackie
