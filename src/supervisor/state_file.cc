#include "supervisor/state_file.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <memory>

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
    if (!record.request.project_name.empty())
      cJSON_AddStringToObject(item, "project_name", record.request.project_name.c_str());
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
    record.request.project_name = string_field(item, "project_name");
    const cJSON* env = cJSON_GetObjectItemCaseSensitive(item, "env");
    const cJSON* var;
    cJSON_ArrayForEach(var, env) {
      if (cJSON_IsString(var)) record.request.env.emplace_back(var->string, var->valuestring);
    }
    if (record.name.empty() || record.request.file.empty())
      return Error{UV_EINVAL, "state file: a stack without name or file"};
    out.push_back(std::move(record));
  }
  return out;
}

Result<std::vector<StackRecord>> read_state_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return system_error(errno, "open " + temp);
  std::string text = state_to_json(stacks);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      return system_error(saved, "write " + temp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return system_error(errno, "sync " + temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) return system_error(errno, "rename " + temp);
  return {};
}

}  // namespace stackie
