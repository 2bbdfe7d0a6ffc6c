// The only toml++ user. Debian's toml++ is a compiled library built with exceptions, so parse
// errors arrive as toml::parse_error and are turned into values here.
#include "stack/settings.h"

#include <sys/stat.h>

#include <toml++/toml.h>
#include <cerrno>
#include <charconv>

#include "base/fs_path.h"
#include "stack/block_def.h"
#include "stack/paths.h"
#include "stack/yaml_fields.h"
#include "stack/yaml_node.h"

namespace stackie {

namespace {

SourceLocation where_of(const toml::node& node, const std::string& path) {
  const auto& source = node.source();
  return {path, static_cast<int>(source.begin.line), static_cast<int>(source.begin.column)};
}

Status check_keys(const toml::table& table, std::initializer_list<std::string_view> known,
                  std::string_view context, const std::string& path) {
  for (const auto& [key, value] : table) {
    std::string name(key.str());
    bool found = false;
    for (auto k : known) found = found || k == name;
    if (found) continue;
    const auto& source = key.source();
    SourceLocation where{path, static_cast<int>(source.begin.line),
                         static_cast<int>(source.begin.column)};
    if (where.line == 0) where = where_of(value, path);
    return error_at(where,
                    "unknown setting '" + name + "' in " + std::string(context) +
                        did_you_mean(name, std::vector<std::string>(known.begin(), known.end())));
  }
  return {};
}

// An absolute path or "" (= the default). GCC 12 misreads a Result<std::string> moved out
// here as uninitialised (-Wmaybe-uninitialized), so the value comes back through `out`.
Status get_absolute_path(const toml::node& node, std::string_view key, const std::string& path,
                         std::string& out) {
  auto value = node.value<std::string>();
  if (!value) return error_at(where_of(node, path), "'" + std::string(key) + "' must be a string");
  // A named pipe is the socket's Windows form (stack/paths.h default_socket_path).
  const bool named_pipe =
      key == "socket_path" && host_os_name() == "windows" && value->rfind("\\\\.\\pipe\\", 0) == 0;
  if (!value->empty() && !is_host_absolute_path(*value) && !named_pipe)
    return error_at(where_of(node, path),
                    "'" + std::string(key) + "' must be an absolute path, got '" + *value + "'");
  out = *value;
  return {};
}

Result<bool> get_bool(const toml::node& node, std::string_view key, const std::string& path) {
  if (auto value = node.value_exact<bool>()) return *value;
  return error_at(where_of(node, path), "'" + std::string(key) + "' must be true or false");
}

// An integer (bytes) or a string with a binary unit: "10MiB", "512KiB", "1GiB".
Result<std::uint64_t> get_size(const toml::node& node, std::string_view key,
                               const std::string& path) {
  auto bad = [&] {
    return error_at(where_of(node, path),
                    "'" + std::string(key) + "' must be a size in bytes or like \"10MiB\"");
  };
  if (auto number = node.value_exact<int64_t>()) {
    if (*number <= 0) return bad();
    return static_cast<std::uint64_t>(*number);
  }
  auto text = node.value<std::string>();
  if (!text) return bad();
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || value == 0) return bad();
  std::string_view unit(ptr, static_cast<size_t>(text->data() + text->size() - ptr));
  if (unit == "" || unit == "B") return value;
  if (unit == "KiB") return value << 10;
  if (unit == "MiB") return value << 20;
  if (unit == "GiB") return value << 30;
  return bad();
}

}  // namespace

Result<Settings> parse_settings(std::string_view text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    const auto& source = error.source();
    return error_at(
        {path, static_cast<int>(source.begin.line), static_cast<int>(source.begin.column)},
        "TOML syntax error: " + std::string(error.description()));
  }
  Settings settings;
  STACKIE_TRY(check_keys(root,
                         {"storage_root", "storage_roots", "socket_path", "no_sandbox", "restart",
                          "logs", "sandbox", "api_port"},
                         "config.toml", path));
  if (const toml::node* node = root.get("storage_root"))
    STACKIE_TRY(get_absolute_path(*node, "storage_root", path, settings.storage_root));
  if (const toml::node* node = root.get("storage_roots")) {
    const toml::table* roots = node->as_table();
    if (!roots)
      return error_at(where_of(*node, path), "'storage_roots' must be a table ([storage_roots])");
    for (const auto& [key, value] : *roots) {
      std::string name(key.str());
      YamlNode shown;  // check_name's rules and message, at the key's position
      shown.kind = YamlNode::Kind::scalar;
      shown.text = name;
      shown.where = where_of(value, path);
      STACKIE_TRY(check_name(shown, "storage root name"));
      std::string dir;
      STACKIE_TRY(get_absolute_path(value, "storage_roots." + name, path, dir));
      if (dir.empty())
        return error_at(where_of(value, path), "'storage_roots." + name + "' is empty");
      settings.storage_roots.emplace_back(name, dir);
    }
  }
  if (const toml::node* node = root.get("socket_path"))
    STACKIE_TRY(get_absolute_path(*node, "socket_path", path, settings.socket_path));
  if (const toml::node* node = root.get("no_sandbox")) {
    STACKIE_TRY_ASSIGN(value, get_bool(*node, "no_sandbox", path));
    settings.no_sandbox = value;
  }
  if (const toml::node* node = root.get("api_port")) {
    auto value = node->value_exact<int64_t>();
    if (!value || *value < 0 || *value > 65535)
      return error_at(where_of(*node, path), "api_port must be a port number 1..65535 (0: off)");
    settings.api_port = static_cast<int>(*value);
  }
  if (const toml::node* node = root.get("restart")) {
    auto restart_text = node->value<std::string>();
    std::string value = restart_text.value_or("");
    if (value == "no")
      settings.default_restart = RestartPolicy::no;
    else if (value == "on-failure")
      settings.default_restart = RestartPolicy::on_failure;
    else if (value == "always")
      settings.default_restart = RestartPolicy::always;
    else
      return error_at(where_of(*node, path),
                      "unknown restart policy '" + value + "' (expected no, on-failure or always)");
  }
  if (const toml::node* node = root.get("sandbox")) {
    const toml::table* sandbox = node->as_table();
    if (!sandbox) return error_at(where_of(*node, path), "'sandbox' must be a table ([sandbox])");
    STACKIE_TRY(check_keys(*sandbox, {"backend"}, "[sandbox]", path));
    if (const toml::node* backend = sandbox->get("backend")) {
      std::string value = backend->value<std::string>().value_or("");
      if (value != "auto" && value != "namespaces" && value != "landlock")
        return error_at(where_of(*backend, path), "unknown sandbox backend '" + value +
                                                      "' (expected auto, namespaces or landlock)");
      settings.sandbox_backend = value;
    }
  }
  if (const toml::node* node = root.get("logs")) {
    const toml::table* logs = node->as_table();
    if (!logs) return error_at(where_of(*node, path), "'logs' must be a table ([logs])");
    STACKIE_TRY(check_keys(*logs, {"max_size", "max_files"}, "[logs]", path));
    if (const toml::node* size = logs->get("max_size")) {
      STACKIE_TRY_ASSIGN(value, get_size(*size, "logs.max_size", path));
      settings.log_max_size = value;
    }
    if (const toml::node* files = logs->get("max_files")) {
      auto value = files->value_exact<int64_t>();
      if (!value || *value < 1 || *value > kMostLogFiles)
        return error_at(
            where_of(*files, path),
            "'logs.max_files' must be a whole number from 1 to " + std::to_string(kMostLogFiles));
      settings.log_max_files = static_cast<int>(*value);
    }
  }
  return settings;
}

Result<Settings> load_settings(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 && errno == ENOENT) return Settings{};
  STACKIE_TRY_ASSIGN(text, read_text_file(path));
  return parse_settings(text, path);
}

}  // namespace stackie
