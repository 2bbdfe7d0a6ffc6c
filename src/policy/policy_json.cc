// SandboxPolicy <-> JSON, through base/json.h: the lockbox reads what the daemon wrote with the
// same parser and writer as the IPC, so both ends agree on what a valid policy text is.
#include <climits>
#include <cstdint>

#include "base/json.h"
#include "policy/policy.h"

namespace stackie {
namespace {

// A policy lists binds and environment variables: far below the IPC's 1 MiB, but a stack with
// a large environment should not hit a limit chosen for another message.
constexpr JsonLimits kPolicyLimits{.max_bytes = std::size_t{16} << 20, .max_depth = 8};

Json binds_to_json(const std::vector<BindMount>& binds) {
  Json array = Json::array();
  for (const auto& bind : binds) {
    Json item = Json::object({{"source", bind.source}});
    if (!bind.dest.empty()) item.set("dest", bind.dest);
    array.push_back(std::move(item));
  }
  return array;
}

Error field_error(std::string_view field, std::string_view expected) {
  return Error{0, "policy: field '" + std::string(field) + "' must be " + std::string(expected)};
}

Result<std::string> get_string(const Json& object, const char* field, bool required) {
  const Json* item = object.find(field);
  if (!item) {
    if (required) return Error{0, std::string("policy: missing field '") + field + "'"};
    return std::string();
  }
  if (!item->is_string()) return field_error(field, "a string");
  return item->as_string();
}

Result<std::vector<BindMount>> get_binds(const Json& object, const char* field) {
  std::vector<BindMount> binds;
  const Json* array = object.find(field);
  if (!array) return binds;
  if (!array->is_array()) return field_error(field, "an array");
  for (const Json& item : array->as_array()) {
    if (!item.is_object()) return field_error(field, "an array of {source, dest} objects");
    STACKIE_TRY_ASSIGN(source, get_string(item, "source", true));
    STACKIE_TRY_ASSIGN(dest, get_string(item, "dest", false));
    binds.push_back({std::move(source), std::move(dest)});
  }
  return binds;
}

// A non-negative integer (absent = 0) of an object such as "limits".
Result<uint64_t> get_count(const Json& object, const char* field) {
  const Json* item = object.find(field);
  if (!item) return uint64_t{0};
  if (!item->is_int() || item->as_int() < 0)
    return field_error(std::string("limits.") + field, "a non-negative integer");
  return static_cast<uint64_t>(item->as_int());
}

// TCP ports (absent = none).
Result<std::vector<int>> get_ports(const Json& object, const char* field) {
  std::vector<int> ports;
  const Json* array = object.find(field);
  if (!array) return ports;
  if (!array->is_array()) return field_error(field, "an array of ports");
  for (const Json& item : array->as_array()) {
    if (!item.is_int() || item.as_int() < 1 || item.as_int() > 65535)
      return field_error(field, "an array of ports (1-65535)");
    ports.push_back(static_cast<int>(item.as_int()));
  }
  return ports;
}

}  // namespace

std::string policy_to_json(const SandboxPolicy& policy) {
  Json tmpfs = Json::array();
  for (const auto& dest : policy.tmpfs) tmpfs.push_back(dest);
  Json environment = Json::array();
  for (const auto& [name, value] : policy.environment)
    environment.push_back(Json(Json::Array{name, value}));
  Json fds = Json::array();
  for (int fd : policy.pass_fds) fds.push_back(fd);
  Json hosts = Json::array();
  for (const auto& host : policy.host_names) hosts.push_back(host);
  Json link_free = Json::array();
  for (const auto& root : policy.link_free_roots) link_free.push_back(root);
  Json no_create = Json::array();
  for (const auto& path : policy.no_create) no_create.push_back(path);
  Json bind = Json::array();
  for (int port : policy.tcp_bind) bind.push_back(port);
  Json connect = Json::array();
  for (int port : policy.tcp_connect) connect.push_back(port);
  return to_json(Json::object({
      {"v", 1},
      {"name", policy.name},
      {"system_view", policy.system_view},
      {"read_only", binds_to_json(policy.read_only)},
      {"read_write", binds_to_json(policy.read_write)},
      {"tmpfs", std::move(tmpfs)},
      {"network", to_string(policy.network)},
      {"identity", to_string(policy.identity)},
      {"environment", std::move(environment)},
      {"working_dir", policy.working_dir},
      {"host_tmp_dir", policy.host_tmp_dir},
      {"storage_root", policy.storage_root},
      {"link_free_roots", std::move(link_free)},
      {"no_create", std::move(no_create)},
      {"host_names", std::move(hosts)},
      {"pass_fds", std::move(fds)},
      {"tcp_bind", std::move(bind)},
      {"tcp_connect", std::move(connect)},
      {"limits", Json::object({
                     {"memory", static_cast<std::int64_t>(policy.limits.memory_bytes)},
                     {"pids", policy.limits.pids},
                     {"cpu_millis", policy.limits.cpu_millis},
                     {"shm", static_cast<std::int64_t>(policy.limits.shm_bytes)},
                     {"memory_given", policy.limits.memory_given},
                 })},
  }));
}

Result<SandboxPolicy> policy_from_json(std::string_view text) {
  Result<Json> parsed = parse_json(text, kPolicyLimits);
  if (!parsed.ok()) return Error{0, "policy: not valid JSON (" + parsed.error().message + ")"};
  const Json& json = *parsed;
  if (!json.is_object()) return Error{0, "policy: expected a JSON object"};
  if (json["v"] != Json(1))
    return Error{0, "policy: unsupported or missing version 'v' (expected 1)"};

  SandboxPolicy policy;
  STACKIE_TRY_ASSIGN(name, get_string(json, "name", false));
  policy.name = std::move(name);
  if (const Json* view = json.find("system_view")) {
    if (!view->is_bool()) return field_error("system_view", "a boolean");
    policy.system_view = view->as_bool();
  }
  STACKIE_TRY_ASSIGN(read_only, get_binds(json, "read_only"));
  policy.read_only = std::move(read_only);
  STACKIE_TRY_ASSIGN(read_write, get_binds(json, "read_write"));
  policy.read_write = std::move(read_write);
  if (const Json* tmpfs = json.find("tmpfs")) {
    if (!tmpfs->is_array()) return field_error("tmpfs", "an array of strings");
    for (const Json& item : tmpfs->as_array()) {
      if (!item.is_string()) return field_error("tmpfs", "an array of strings");
      policy.tmpfs.push_back(item.as_string());
    }
  }
  STACKIE_TRY_ASSIGN(network, get_string(json, "network", false));
  if (!network.empty()) {
    STACKIE_TRY_ASSIGN(mode, parse_network_mode(network));
    policy.network = mode;
  }
  STACKIE_TRY_ASSIGN(identity, get_string(json, "identity", false));
  if (!identity.empty()) {
    STACKIE_TRY_ASSIGN(parsed_identity, parse_identity(identity));
    policy.identity = parsed_identity;
  }
  if (const Json* env = json.find("environment")) {
    if (!env->is_array()) return field_error("environment", "an array of [name, value] pairs");
    for (const Json& pair : env->as_array()) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
        return field_error("environment", "an array of [name, value] pairs");
      policy.environment.emplace_back(pair[0].as_string(), pair[1].as_string());
    }
  }
  STACKIE_TRY_ASSIGN(working_dir, get_string(json, "working_dir", false));
  policy.working_dir = std::move(working_dir);
  STACKIE_TRY_ASSIGN(host_tmp_dir, get_string(json, "host_tmp_dir", false));
  policy.host_tmp_dir = std::move(host_tmp_dir);
  STACKIE_TRY_ASSIGN(storage_root, get_string(json, "storage_root", false));
  policy.storage_root = std::move(storage_root);
  if (const Json* roots = json.find("link_free_roots")) {
    if (!roots->is_array()) return field_error("link_free_roots", "an array of strings");
    for (const Json& item : roots->as_array()) {
      if (!item.is_string()) return field_error("link_free_roots", "an array of strings");
      policy.link_free_roots.push_back(item.as_string());
    }
  }
  if (const Json* paths = json.find("no_create")) {
    if (!paths->is_array()) return field_error("no_create", "an array of strings");
    for (const Json& item : paths->as_array()) {
      if (!item.is_string()) return field_error("no_create", "an array of strings");
      policy.no_create.push_back(item.as_string());
    }
  }
  if (const Json* hosts = json.find("host_names")) {
    if (!hosts->is_array()) return field_error("host_names", "an array of strings");
    for (const Json& item : hosts->as_array()) {
      if (!item.is_string()) return field_error("host_names", "an array of strings");
      policy.host_names.push_back(item.as_string());
    }
  }
  STACKIE_TRY_ASSIGN(tcp_bind, get_ports(json, "tcp_bind"));
  policy.tcp_bind = std::move(tcp_bind);
  STACKIE_TRY_ASSIGN(tcp_connect, get_ports(json, "tcp_connect"));
  policy.tcp_connect = std::move(tcp_connect);
  if (const Json* fds = json.find("pass_fds")) {
    if (!fds->is_array()) return field_error("pass_fds", "an array of integers");
    for (const Json& item : fds->as_array()) {
      if (!item.is_int() || item.as_int() < INT_MIN || item.as_int() > INT_MAX)
        return field_error("pass_fds", "an array of integers");
      policy.pass_fds.push_back(static_cast<int>(item.as_int()));
    }
  }
  if (const Json* limits = json.find("limits")) {
    if (!limits->is_object()) return field_error("limits", "an object");
    STACKIE_TRY_ASSIGN(memory, get_count(*limits, "memory"));
    STACKIE_TRY_ASSIGN(pids, get_count(*limits, "pids"));
    STACKIE_TRY_ASSIGN(cpu, get_count(*limits, "cpu_millis"));
    STACKIE_TRY_ASSIGN(shm, get_count(*limits, "shm"));
    if (pids > INT_MAX || cpu > INT_MAX) return field_error("limits", "in range");
    policy.limits = {memory, static_cast<int>(pids), static_cast<int>(cpu), shm, false};
    if (const Json* given = limits->find("memory_given")) {
      if (!given->is_bool()) return field_error("limits.memory_given", "a boolean");
      policy.limits.memory_given = given->as_bool();
    }
  }
  STACKIE_TRY(validate(policy));
  return policy;
}

}  // namespace stackie
