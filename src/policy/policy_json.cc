// SandboxPolicy <-> JSON. cJSON stays inside this file (DESIGN.md §2: no third-party type in a
// module header).
#include <cjson/cJSON.h>

#include <memory>

#include "policy/policy.h"

namespace stackie {
namespace {

struct JsonDeleter {
  void operator()(cJSON* json) const { cJSON_Delete(json); }
};
using JsonPtr = std::unique_ptr<cJSON, JsonDeleter>;

cJSON* binds_to_json(const std::vector<BindMount>& binds) {
  cJSON* array = cJSON_CreateArray();
  for (const auto& bind : binds) {
    cJSON* item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "source", bind.source.c_str());
    if (!bind.dest.empty()) cJSON_AddStringToObject(item, "dest", bind.dest.c_str());
    cJSON_AddItemToArray(array, item);
  }
  return array;
}

Error field_error(std::string_view field, std::string_view expected) {
  return Error{0, "policy: field '" + std::string(field) + "' must be " + std::string(expected)};
}

Result<std::string> get_string(const cJSON* object, const char* field, bool required) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, field);
  if (!item) {
    if (required) return Error{0, std::string("policy: missing field '") + field + "'"};
    return std::string();
  }
  if (!cJSON_IsString(item)) return field_error(field, "a string");
  return std::string(item->valuestring);
}

Result<std::vector<BindMount>> get_binds(const cJSON* object, const char* field) {
  std::vector<BindMount> binds;
  const cJSON* array = cJSON_GetObjectItemCaseSensitive(object, field);
  if (!array) return binds;
  if (!cJSON_IsArray(array)) return field_error(field, "an array");
  const cJSON* item;
  cJSON_ArrayForEach(item, array) {
    if (!cJSON_IsObject(item)) return field_error(field, "an array of {source, dest} objects");
    STACKIE_TRY_ASSIGN(source, get_string(item, "source", true));
    STACKIE_TRY_ASSIGN(dest, get_string(item, "dest", false));
    binds.push_back({std::move(source), std::move(dest)});
  }
  return binds;
}

// An absent field is an empty list (older senders).
Result<std::vector<int>> get_ints(const cJSON* object, const char* field) {
  std::vector<int> out;
  const cJSON* array = cJSON_GetObjectItemCaseSensitive(object, field);
  if (!array) return out;
  if (!cJSON_IsArray(array)) return field_error(field, "an array of integers");
  const cJSON* item;
  cJSON_ArrayForEach(item, array) {
    if (!cJSON_IsNumber(item) || item->valuedouble != static_cast<double>(item->valueint))
      return field_error(field, "an array of integers");
    out.push_back(item->valueint);
  }
  return out;
}

void ints_to_json(cJSON* object, const char* field, const std::vector<int>& values) {
  cJSON* array = cJSON_AddArrayToObject(object, field);
  for (int value : values) cJSON_AddItemToArray(array, cJSON_CreateNumber(value));
}

}  // namespace

std::string policy_to_json(const SandboxPolicy& policy) {
  JsonPtr root(cJSON_CreateObject());
  cJSON* json = root.get();
  cJSON_AddNumberToObject(json, "v", 1);
  cJSON_AddStringToObject(json, "name", policy.name.c_str());
  cJSON_AddBoolToObject(json, "system_view", policy.system_view);
  cJSON_AddItemToObject(json, "read_only", binds_to_json(policy.read_only));
  cJSON_AddItemToObject(json, "read_write", binds_to_json(policy.read_write));
  cJSON* tmpfs = cJSON_AddArrayToObject(json, "tmpfs");
  for (const auto& dest : policy.tmpfs)
    cJSON_AddItemToArray(tmpfs, cJSON_CreateString(dest.c_str()));
  cJSON_AddStringToObject(json, "network", std::string(to_string(policy.network)).c_str());
  cJSON_AddStringToObject(json, "identity", std::string(to_string(policy.identity)).c_str());
  cJSON* env = cJSON_AddArrayToObject(json, "environment");
  for (const auto& [name, value] : policy.environment) {
    cJSON* pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pair, cJSON_CreateString(name.c_str()));
    cJSON_AddItemToArray(pair, cJSON_CreateString(value.c_str()));
    cJSON_AddItemToArray(env, pair);
  }
  cJSON_AddStringToObject(json, "working_dir", policy.working_dir.c_str());
  cJSON_AddStringToObject(json, "host_tmp_dir", policy.host_tmp_dir.c_str());
  cJSON_AddStringToObject(json, "storage_root", policy.storage_root.c_str());
  ints_to_json(json, "pass_fds", policy.pass_fds);
  ints_to_json(json, "serve_ports", policy.serve_ports);
  ints_to_json(json, "connect_ports", policy.connect_ports);

  char* text = cJSON_PrintUnformatted(json);
  std::string out = text ? text : "";
  cJSON_free(text);
  return out;
}

Result<SandboxPolicy> policy_from_json(std::string_view text) {
  JsonPtr root(cJSON_ParseWithLength(text.data(), text.size()));
  if (!root) return Error{0, "policy: not valid JSON"};
  const cJSON* json = root.get();
  if (!cJSON_IsObject(json)) return Error{0, "policy: expected a JSON object"};
  const cJSON* version = cJSON_GetObjectItemCaseSensitive(json, "v");
  if (!cJSON_IsNumber(version) || version->valueint != 1)
    return Error{0, "policy: unsupported or missing version 'v' (expected 1)"};

  SandboxPolicy policy;
  STACKIE_TRY_ASSIGN(name, get_string(json, "name", false));
  policy.name = std::move(name);
  if (const cJSON* view = cJSON_GetObjectItemCaseSensitive(json, "system_view")) {
    if (!cJSON_IsBool(view)) return field_error("system_view", "a boolean");
    policy.system_view = cJSON_IsTrue(view);
  }
  STACKIE_TRY_ASSIGN(read_only, get_binds(json, "read_only"));
  policy.read_only = std::move(read_only);
  STACKIE_TRY_ASSIGN(read_write, get_binds(json, "read_write"));
  policy.read_write = std::move(read_write);
  if (const cJSON* tmpfs = cJSON_GetObjectItemCaseSensitive(json, "tmpfs")) {
    if (!cJSON_IsArray(tmpfs)) return field_error("tmpfs", "an array of strings");
    const cJSON* item;
    cJSON_ArrayForEach(item, tmpfs) {
      if (!cJSON_IsString(item)) return field_error("tmpfs", "an array of strings");
      policy.tmpfs.emplace_back(item->valuestring);
    }
  }
  STACKIE_TRY_ASSIGN(network, get_string(json, "network", false));
  if (!network.empty()) {
    STACKIE_TRY_ASSIGN(mode, parse_network_mode(network));
    policy.network = mode;
  }
  STACKIE_TRY_ASSIGN(identity, get_string(json, "identity", false));
  if (!identity.empty()) {
    STACKIE_TRY_ASSIGN(parsed, parse_identity(identity));
    policy.identity = parsed;
  }
  if (const cJSON* env = cJSON_GetObjectItemCaseSensitive(json, "environment")) {
    if (!cJSON_IsArray(env)) return field_error("environment", "an array of [name, value] pairs");
    const cJSON* pair;
    cJSON_ArrayForEach(pair, env) {
      if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 ||
          !cJSON_IsString(cJSON_GetArrayItem(pair, 0)) ||
          !cJSON_IsString(cJSON_GetArrayItem(pair, 1)))
        return field_error("environment", "an array of [name, value] pairs");
      policy.environment.emplace_back(cJSON_GetArrayItem(pair, 0)->valuestring,
                                      cJSON_GetArrayItem(pair, 1)->valuestring);
    }
  }
  STACKIE_TRY_ASSIGN(working_dir, get_string(json, "working_dir", false));
  policy.working_dir = std::move(working_dir);
  STACKIE_TRY_ASSIGN(host_tmp_dir, get_string(json, "host_tmp_dir", false));
  policy.host_tmp_dir = std::move(host_tmp_dir);
  STACKIE_TRY_ASSIGN(storage_root, get_string(json, "storage_root", false));
  policy.storage_root = std::move(storage_root);
  STACKIE_TRY_ASSIGN(pass_fds, get_ints(json, "pass_fds"));
  policy.pass_fds = std::move(pass_fds);
  STACKIE_TRY_ASSIGN(serve_ports, get_ints(json, "serve_ports"));
  policy.serve_ports = std::move(serve_ports);
  STACKIE_TRY_ASSIGN(connect_ports, get_ints(json, "connect_ports"));
  policy.connect_ports = std::move(connect_ports);
  STACKIE_TRY(validate(policy));
  return policy;
}

}  // namespace stackie
