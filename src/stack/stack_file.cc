#include "stack/stack_file.h"

#include <sys/stat.h>

#include <algorithm>

#include "base/fs_path.h"
#include "stack/compose_file.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

std::string parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Result<std::vector<ConsumeDecl>> parse_consumes(const YamlNode& node) {
  std::vector<ConsumeDecl> out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "consumes"));
  for (const auto& [key, value] : node.entries) {
    STACKIE_TRY(check_name(key, "consumes name"));
    ConsumeDecl consume;
    consume.name = key.text;
    consume.where = key.where;
    consume.block_where = value.where;
    std::string what = "consumes." + key.text;
    if (value.is_null()) {
      consume.port_type = key.text;
    } else if (value.is_scalar()) {
      consume.block = value.text;
    } else {
      STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, what));
      STACKIE_TRY(check_fields(value, {"port_type", "block_override"}, what));
      if (const YamlNode* type = value.find("port_type")) {
        STACKIE_TRY_ASSIGN(text, read_string(*type, what + ".port_type"));
        consume.port_type = text;
      }
      if (const YamlNode* block = value.find("block_override")) {
        STACKIE_TRY_ASSIGN(text, read_string(*block, what + ".block_override"));
        consume.block = text;
        consume.block_where = block->where;
      }
      if (consume.port_type.empty() && consume.block.empty())
        return error_at(value.where, "'" + what + "' needs a 'port_type' or a 'block_override'");
    }
    out.push_back(std::move(consume));
  }
  return out;
}

// `- SOURCE:TARGET[:ro]`, the form the docs showed first (the map form is preferred). The path
// it provides is named after TARGET's last component, so `pgdata:/var/lib/postgresql/data`
// replaces postgres's `data`; SOURCE is a project volume's name or a host directory.
Result<VolumeDecl> parse_volume_item(const YamlNode& item) {
  STACKIE_TRY(expect_kind(item, YamlNode::Kind::scalar, "volumes"));
  const std::string& text = item.text;
  size_t colon = text.find(':');
  std::string source = text.substr(0, colon);
  std::string target = colon == std::string::npos ? "" : text.substr(colon + 1);
  bool read_only = false;
  if (size_t second = target.find(':'); second != std::string::npos) {
    std::string option = target.substr(second + 1);
    if (option != "ro" && option != "rw")
      return error_at(item.at_offset(colon + 1 + second + 1),
                      "unknown volume option '" + option + "' (expected ro or rw)");
    read_only = option == "ro";
    target.resize(second);
  }
  if (source.empty() || target.empty() || target[0] != '/')
    return error_at(item.where, "volume '" + text +
                                    "' must be SOURCE:/TARGET (a volume name or a host "
                                    "directory, then the path it serves)");
  VolumeDecl volume;
  volume.where = item.where;
  volume.read_only = read_only;
  YamlNode name = item;
  name.text = target.substr(target.rfind('/') + 1);
  STACKIE_TRY(check_name(name, "volume target's last component"));
  volume.name = name.text;
  if (is_host_absolute_path(source) || source[0] == '.') {
    YamlNode host = item;
    host.text = source;
    volume.host_path = host;
    volume.relative_host = true;
  } else {
    YamlNode shared = item;
    shared.text = source;
    STACKIE_TRY(check_name(shared, "volume name"));
    volume.project_volume = source;
    if (read_only)
      return error_at(item.where, "a project volume is writable; ':ro' is for a host directory");
  }
  return volume;
}

Result<std::vector<VolumeDecl>> parse_volumes(const YamlNode& node) {
  std::vector<VolumeDecl> out;
  if (node.is_null()) return out;
  if (node.is_sequence()) {
    for (const auto& item : node.items) {
      STACKIE_TRY_ASSIGN(volume, parse_volume_item(item));
      out.push_back(std::move(volume));
    }
    return out;
  }
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "volumes"));
  for (const auto& [key, value] : node.entries) {
    STACKIE_TRY(check_name(key, "volume name"));
    VolumeDecl volume;
    volume.name = key.text;
    volume.where = key.where;
    std::string what = "volumes." + key.text;
    if (value.is_map()) {  // {host: DIR, read_only: true}
      STACKIE_TRY(check_fields(value, {"host", "read_only"}, what));
      const YamlNode* host = value.find("host");
      if (host == nullptr) return error_at(value.where, "'" + what + "' needs 'host'");
      STACKIE_TRY(expect_kind(*host, YamlNode::Kind::scalar, what + ".host"));
      volume.host_path = *host;
      if (const YamlNode* read_only = value.find("read_only")) {
        STACKIE_TRY_ASSIGN(flag, read_bool(*read_only, what + ".read_only"));
        volume.read_only = flag;
      }
    } else if (!value.is_null()) {
      STACKIE_TRY(expect_kind(value, YamlNode::Kind::scalar, what));
      volume.host_path = value;
    }
    out.push_back(std::move(volume));
  }
  return out;
}

Result<std::map<std::string, bool>> parse_platforms(const YamlNode& node) {
  std::map<std::string, bool> out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "platforms"));
  STACKIE_TRY(check_fields(node, {"linux", "macos", "windows"}, "platforms"));
  for (const auto& [key, value] : node.entries) {
    std::string what = "platforms." + key.text;
    STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, what));
    STACKIE_TRY(check_fields(value, {"sandbox"}, what));
    if (const YamlNode* sandbox = value.find("sandbox")) {
      STACKIE_TRY_ASSIGN(enabled, read_bool(*sandbox, what + ".sandbox"));
      out[key.text] = enabled;
    }
  }
  return out;
}

// A watch glob stays inside the project directory: relative, no "..".
Status check_watch_glob(const YamlNode& glob, std::string_view what) {
  const std::string& text = glob.text;
  if (text.empty()) return error_at(glob.where, "empty '" + std::string(what) + "' glob");
  if (text[0] == '/')
    return error_at(glob.where, "'" + std::string(what) +
                                    "' globs are relative to the block's "
                                    "path, got '" +
                                    text + "'");
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find('/', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, end - at, "..") == 0)
      return error_at(glob.at_offset(at),
                      "'" + std::string(what) + "' may not leave the block's path ('..')");
    at = end + 1;
  }
  return {};
}

Result<WatchDecl> parse_watch(const YamlNode& node) {
  WatchDecl watch;
  watch.where = node.where;
  const YamlNode* paths = &node;
  if (node.is_map()) {
    STACKIE_TRY(check_fields(node, {"paths", "ignore", "action", "signal", "debounce"}, "watch"));
    paths = node.find("paths");
    if (const YamlNode* ignore = node.find("ignore")) {
      STACKIE_TRY_ASSIGN(list, read_scalar_list(*ignore, "watch.ignore"));
      for (const auto& glob : list) STACKIE_TRY(check_watch_glob(glob, "watch.ignore"));
      watch.ignore = std::move(list);
    }
    if (const YamlNode* action = node.find("action")) {
      STACKIE_TRY(expect_kind(*action, YamlNode::Kind::scalar, "watch.action"));
      if (action->text == "restart")
        watch.action = WatchSpec::Action::restart;
      else if (action->text == "signal" || action->text == "sync+signal")
        watch.action = WatchSpec::Action::signal;
      else
        return error_at(action->where, "unknown watch action '" + action->text +
                                           "' (expected restart or signal)" +
                                           did_you_mean(action->text, {"restart", "signal"}));
    }
    if (const YamlNode* signal = node.find("signal")) {
      STACKIE_TRY_ASSIGN(number, parse_signal(*signal));
      watch.signal = number;
    }
    if (const YamlNode* debounce = node.find("debounce")) {
      STACKIE_TRY_ASSIGN(ms, read_duration_ms(*debounce, "watch.debounce"));
      watch.debounce_ms = ms;
    }
  }
  if (paths != nullptr && !paths->is_null()) {
    if (paths->is_scalar()) {
      watch.paths.push_back(*paths);
    } else {
      STACKIE_TRY_ASSIGN(list, read_scalar_list(*paths, "watch.paths"));
      watch.paths = std::move(list);
    }
  }
  for (const auto& glob : watch.paths) STACKIE_TRY(check_watch_glob(glob, "watch.paths"));
  return watch;
}

// Profile names as compose spells them: [a-zA-Z0-9][a-zA-Z0-9_.-]*.
Status check_profile_name(const YamlNode& node) {
  const std::string& name = node.text;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (size_t i = 0; i < name.size(); ++i)
    if (!alnum(name[i]) && (i == 0 || (name[i] != '_' && name[i] != '.' && name[i] != '-')))
      return error_at(node.at_offset(i), "invalid profile name '" + name +
                                             "' (letters, digits, '_', '.', '-'; not first)");
  if (name.empty()) return error_at(node.where, "empty profile name");
  return {};
}

// `depends_on: {migrate: {condition: completed_successfully}, db: {condition: healthy}}`
Status parse_depends_on_map(const YamlNode& node, StackBlockDecl& block) {
  for (const auto& [name, value] : node.entries) {
    block.depends_on.emplace_back(name.text, name.where);
    if (value.is_null()) continue;
    STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, "depends_on." + name.text));
    STACKIE_TRY(check_fields(value, {"condition"}, "depends_on." + name.text));
    const YamlNode* condition = value.find("condition");
    if (condition == nullptr) continue;
    STACKIE_TRY(expect_kind(*condition, YamlNode::Kind::scalar, "condition"));
    const std::string& text = condition->text;
    if (text == "healthy" || text == "service_healthy") continue;
    if (text == "started" || text == "service_started")
      block.depend_conditions.emplace_back(name.text, DependCondition::started);
    else if (text == "completed_successfully" || text == "service_completed_successfully")
      block.depend_conditions.emplace_back(name.text, DependCondition::completed_successfully);
    else
      return error_at(
          condition->where,
          "unknown condition '" + text + "' (expected healthy, started or completed_successfully)");
  }
  return {};
}

// `paths: {NAME: /inside/path}`: where the block sees its path NAME. Only the form is checked
// here; where such a path may go is the loader's (it knows the sandbox).
Result<std::vector<std::pair<YamlNode, YamlNode>>> parse_inside_paths(const YamlNode& node) {
  std::vector<std::pair<YamlNode, YamlNode>> out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "paths"));
  for (const auto& [key, value] : node.entries) {
    STACKIE_TRY(check_name(key, "path name"));
    std::string what = "paths." + key.text;
    if (!value.is_scalar() || value.text.empty() || value.text[0] != '/')
      return error_at(
          value.where,
          "'" + what + "' must be an absolute path inside the sandbox, got " +
              (value.is_scalar() ? "'" + value.text + "'" : std::string(describe(value.kind))));
    out.emplace_back(key, value);
  }
  return out;
}

// `sources: DIR` or a list: directories of block definitions, relative to the stack file's.
Result<std::vector<std::pair<std::string, SourceLocation>>> parse_sources(const YamlNode& node,
                                                                          const std::string& dir) {
  std::vector<std::pair<std::string, SourceLocation>> out;
  std::vector<YamlNode> items;
  if (node.is_scalar()) {
    items.push_back(node);
  } else if (!node.is_null()) {
    STACKIE_TRY_ASSIGN(list, read_scalar_list(node, "sources"));
    items = std::move(list);
  }
  for (const auto& item : items) {
    if (item.text.empty()) return error_at(item.where, "'sources' names an empty directory");
    std::string path = is_host_absolute_path(item.text) ? item.text : dir + "/" + item.text;
    out.emplace_back(normalize_path(path), item.where);
  }
  return out;
}

// `stacks: {PATH: {} | {blocks: ...}}` or `stacks: [PATH...]`.
Result<std::vector<SubstackDecl>> parse_substacks(const YamlNode& node) {
  std::vector<SubstackDecl> out;
  if (node.is_null()) return out;
  if (node.is_sequence()) {
    STACKIE_TRY_ASSIGN(list, read_scalar_list(node, "stacks"));
    for (auto& path : list) out.push_back({std::move(path), std::nullopt});
  } else {
    STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "stacks"));
    for (const auto& [key, value] : node.entries) {
      SubstackDecl decl{key, std::nullopt};
      if (!value.is_null()) {
        STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, "stacks." + key.text));
        STACKIE_TRY(check_fields(value, {"blocks"}, "stacks." + key.text));
        decl.overrides = value;
      }
      out.push_back(std::move(decl));
    }
  }
  for (const auto& decl : out)
    if (decl.path.text.empty()) return error_at(decl.path.where, "'stacks' names an empty path");
  return out;
}

// `mode: own | shared`. A shared instance runs the same for every stack that asks for it, so
// its stack entry may only say what identifies it (stackie-stack.yml(5), SHARED BLOCKS): a
// field that would make it differ per stack is refused at its own position.
Status parse_block_mode(const YamlNode& mode, const YamlNode& body, const std::string& block) {
  STACKIE_TRY(expect_kind(mode, YamlNode::Kind::scalar, "mode"));
  if (mode.text != "own" && mode.text != "shared")
    return error_at(mode.where, "unknown mode '" + mode.text + "' for block '" + block +
                                    "' (expected own or shared)" +
                                    did_you_mean(mode.text, {"own", "shared"}));
  if (mode.text != "shared") return {};
  if (body.find("path") != nullptr || body.find("command") != nullptr)
    return error_at(mode.where, "mode shared is for catalog blocks; '" + block +
                                    "' is a block of your own (path, command): each stack runs "
                                    "its own");
  static const std::vector<std::string> allowed = {"mode",    "catalog", "vars",     "serves",
                                                   "version", "limits",  "profiles", "secrets"};
  for (const auto& [key, value] : body.entries)
    if (std::find(allowed.begin(), allowed.end(), key.text) == allowed.end())
      return error_at(key.where, "'" + key.text + "' cannot be set on block '" + block +
                                     "' in mode shared: its one instance runs the same for every "
                                     "stack (a shared block takes catalog, vars, version, serves, "
                                     "limits, profiles and secrets)");
  return {};
}

Result<StackBlockDecl> parse_stack_block(const YamlNode& key, const YamlNode& body) {
  StackBlockDecl block;
  block.name = key.text;
  block.where = key.where;
  std::string context = "block '" + block.name + "'";
  if (!body.is_null()) STACKIE_TRY(expect_kind(body, YamlNode::Kind::map, block.name));
  STACKIE_TRY(check_fields(
      body,
      {"catalog",     "vars",    "serves",  "consumes", "depends_on",  "path",         "command",
       "environment", "volumes", "restart", "health",   "stop_signal", "stop_timeout", "platforms",
       "limits",      "network", "egress",  "version",  "env_file",    "profiles",     "watch",
       "paths",       "tools",   "mode",    "secrets"},
      context));
  if (const YamlNode* v = body.find("mode")) {
    STACKIE_TRY(parse_block_mode(*v, body, block.name));
    block.mode = *v;
  }
  if (const YamlNode* v = body.find("catalog")) {
    STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "catalog"));
    STACKIE_TRY(check_name(*v, "catalog block name"));
    block.catalog = *v;
  }
  if (const YamlNode* v = body.find("vars")) {
    STACKIE_TRY_ASSIGN(vars, read_scalar_map(*v, "vars"));
    block.vars = std::move(vars);
    for (const auto& [var_key, var_value] : v->entries) block.var_where.push_back(var_key.where);
  }
  if (const YamlNode* v = body.find("serves")) {
    STACKIE_TRY_ASSIGN(serves, parse_serves(*v, context, false));
    block.serves = std::move(serves);
  }
  if (const YamlNode* v = body.find("consumes")) {
    STACKIE_TRY_ASSIGN(consumes, parse_consumes(*v));
    block.consumes = std::move(consumes);
  }
  if (const YamlNode* v = body.find("depends_on")) {
    if (v->is_map()) {
      STACKIE_TRY(parse_depends_on_map(*v, block));
    } else {
      STACKIE_TRY_ASSIGN(names, read_scalar_list(*v, "depends_on"));
      for (const auto& name : names) block.depends_on.emplace_back(name.text, name.where);
    }
  }
  if (const YamlNode* v = body.find("version")) {
    STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "version"));
    if (v->text.empty() || v->text.find_first_of("*/?[") != std::string::npos)
      return error_at(v->where,
                      "'version' is a version number such as \"15\", got '" + v->text + "'");
    // A version names directories and sandboxes (a shared instance's volumes live in
    // "postgres.15"): a name's characters, and no trailing '.', which Windows drops.
    STACKIE_TRY(check_name(*v, "version"));
    if (v->text.back() == '.')
      return error_at(v->where, "invalid version '" + v->text + "': it may not end with '.'");
    block.version = *v;
  }
  if (const YamlNode* v = body.find("network")) {
    STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "network"));
    if (v->text != "localhost" && v->text != "outbound")
      return error_at(v->where, "unknown network '" + v->text +
                                    "' for a block of the stack (expected localhost or outbound)");
    block.network = *v;
  }
  if (const YamlNode* v = body.find("egress")) {
    STACKIE_TRY_ASSIGN(patterns, read_scalar_list(*v, "egress"));
    for (const auto& pattern : patterns)
      if (pattern.text.find(':') == std::string::npos)
        return error_at(pattern.where, "egress pattern '" + pattern.text +
                                           "' must be host:port (e.g. *.stripe.com:443)");
    block.egress = std::move(patterns);
  }
  if (const YamlNode* v = body.find("path")) {
    STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "path"));
    block.path = *v;
  }
  if (const YamlNode* v = body.find("command")) {
    STACKIE_TRY_ASSIGN(command, parse_command(*v, context));
    block.command = std::move(command);
  }
  if (const YamlNode* v = body.find("environment")) {
    STACKIE_TRY_ASSIGN(env, read_scalar_map(*v, "environment"));
    block.environment = std::move(env);
  }
  if (const YamlNode* v = body.find("env_file")) {
    STACKIE_TRY_ASSIGN(files, parse_env_files(*v));
    block.env_files = std::move(files);
  }
  if (const YamlNode* v = body.find("profiles")) {
    if (v->is_scalar()) {
      block.profiles.push_back(*v);
    } else {
      STACKIE_TRY_ASSIGN(profiles, read_scalar_list(*v, "profiles"));
      block.profiles = std::move(profiles);
    }
    for (const auto& profile : block.profiles) STACKIE_TRY(check_profile_name(profile));
  }
  if (const YamlNode* v = body.find("secrets")) {
    STACKIE_TRY_ASSIGN(names, read_scalar_list(*v, "secrets"));
    for (const auto& name : names) STACKIE_TRY(check_secret_name(name));
    block.secrets = std::move(names);
  }
  if (const YamlNode* v = body.find("watch")) {
    STACKIE_TRY_ASSIGN(watch, parse_watch(*v));
    block.watch = std::move(watch);
  }
  if (const YamlNode* v = body.find("volumes")) {
    STACKIE_TRY_ASSIGN(volumes, parse_volumes(*v));
    block.volumes = std::move(volumes);
  }
  if (const YamlNode* v = body.find("restart")) {
    STACKIE_TRY_ASSIGN(restart, parse_restart(*v));
    block.restart = restart;
  }
  if (const YamlNode* v = body.find("health")) {
    STACKIE_TRY_ASSIGN(health, parse_health(*v, context));
    block.health = std::move(health);
  }
  if (const YamlNode* v = body.find("stop_signal")) {
    STACKIE_TRY_ASSIGN(signal, parse_signal(*v));
    block.stop_signal = signal;
  }
  if (const YamlNode* v = body.find("stop_timeout")) {
    STACKIE_TRY_ASSIGN(ms, read_duration_ms(*v, "stop_timeout"));
    block.stop_timeout_ms = ms;
  }
  if (const YamlNode* v = body.find("platforms")) {
    STACKIE_TRY_ASSIGN(platforms, parse_platforms(*v));
    block.platform_sandbox = std::move(platforms);
  }
  if (const YamlNode* v = body.find("limits")) {
    STACKIE_TRY_ASSIGN(limits, parse_limits(*v));
    block.limits = std::move(limits);
  }
  if (const YamlNode* v = body.find("paths")) {
    STACKIE_TRY_ASSIGN(paths, parse_inside_paths(*v));
    block.inside_paths = std::move(paths);
  }
  if (const YamlNode* v = body.find("tools")) {
    STACKIE_TRY_ASSIGN(tools, parse_programs(*v, "tools"));
    block.tools = std::move(tools);
  }
  return block;
}

}  // namespace

// A name as `${secrets.NAME}` spells it: letters, digits, '_', '-' (a '.' would end it).
Status check_secret_name(const YamlNode& node) {
  const std::string& name = node.text;
  if (name.empty()) return error_at(node.where, "empty secret name");
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok)
      return error_at(
          node.at_offset(i),
          "invalid secret name '" + name + "' (letters, digits, '_', '-', as in ${secrets.NAME})");
  }
  return {};
}

Result<RestartPolicy> parse_restart(const YamlNode& node) {
  if (node.is_scalar()) {
    if (node.text == "no" || node.text == "false") return RestartPolicy::no;
    if (node.text == "on-failure") return RestartPolicy::on_failure;
    if (node.text == "always") return RestartPolicy::always;
  }
  std::string got = node.is_scalar() ? "'" + node.text + "'" : std::string(describe(node.kind));
  return error_at(
      node.where,
      "unknown restart policy " + got + " (expected no, on-failure or always)" +
          (node.is_scalar() ? did_you_mean(node.text, {"no", "on-failure", "always"}) : ""));
}

const std::vector<std::string>& stack_file_names() {
  static const std::vector<std::string> names = {"stackie-stack.yml", "stackie-stack.yaml",
                                                 "stackie.yml", "stackie.yaml"};
  return names;
}

Result<std::string> find_stack_file(const std::string& file, const std::string& cwd) {
  if (!file.empty()) return is_host_absolute_path(file) ? file : cwd + "/" + file;
  // Stackie's own names first; a Compose file is read in compatibility mode (compose_file.h).
  for (const auto* names : {&stack_file_names(), &compose_file_names()})
    for (const auto& name : *names) {
      std::string candidate = cwd + "/" + name;
      struct stat info {};
      if (::stat(candidate.c_str(), &info) == 0) return candidate;
    }
  return Error{-2, cwd +
                       ": no stack file (looked for stackie-stack.yml, stackie-stack.yaml, "
                       "stackie.yml, stackie.yaml, compose.yaml, compose.yml, "
                       "docker-compose.yaml, docker-compose.yml; use -f FILE)"};
}

Result<StackFile> parse_stack_file(const YamlNode& root, const std::string& absolute_path) {
  if (!root.is_map() || root.entries.empty())
    return error_at(root.where,
                    "a stack file has one top-level key, the stack name, holding "
                    "a map with 'blocks'");
  if (root.entries.size() != 1)
    return error_at(root.entries[1].first.where,
                    "second top-level key '" + root.entries[1].first.text +
                        "'; a stack file has exactly one, the stack name");
  const auto& [key, body] = root.entries.front();
  STACKIE_TRY(check_name(key, "stack name"));
  StackFile stack;
  stack.name = key.text;
  stack.file = absolute_path;
  stack.dir = parent_dir(absolute_path);
  stack.where = key.where;
  STACKIE_TRY(expect_kind(body, YamlNode::Kind::map, stack.name));
  STACKIE_TRY(check_fields(body, {"storage_root", "ports", "blocks", "sources", "stacks"},
                           "stack '" + stack.name + "'"));
  if (const YamlNode* v = body.find("storage_root")) {
    STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "storage_root"));
    stack.storage_root = *v;
  }
  if (const YamlNode* v = body.find("ports")) {
    STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "ports"));
    if (v->text != "strict" && v->text != "next-free")
      return error_at(v->where,
                      "unknown ports mode '" + v->text + "' (expected strict or next-free)");
    stack.strict_ports = v->text == "strict";
  }
  if (const YamlNode* v = body.find("sources")) {
    STACKIE_TRY_ASSIGN(sources, parse_sources(*v, stack.dir));
    stack.sources = std::move(sources);
  }
  if (const YamlNode* v = body.find("stacks")) {
    STACKIE_TRY_ASSIGN(substacks, parse_substacks(*v));
    stack.substacks = std::move(substacks);
  }
  // A stack of substacks alone needs no blocks of its own.
  const YamlNode* blocks = body.find("blocks");
  if (!blocks && stack.substacks.empty())
    return error_at(key.where, "stack '" + stack.name + "' has no 'blocks'");
  if (blocks && !blocks->is_null())
    STACKIE_TRY(expect_kind(*blocks, YamlNode::Kind::map, "blocks"));
  if (blocks && blocks->entries.empty() && stack.substacks.empty())
    return error_at(blocks->where, "stack '" + stack.name + "' has no blocks");
  if (blocks)
    for (const auto& [block_key, block_body] : blocks->entries) {
      STACKIE_TRY(check_name(block_key, "block name"));
      STACKIE_TRY_ASSIGN(block, parse_stack_block(block_key, block_body));
      block.dir = stack.dir;
      stack.blocks.push_back(std::move(block));
    }
  return stack;
}

Result<StackFile> load_stack_file(const std::string& absolute_path) {
  STACKIE_TRY_ASSIGN(root, parse_yaml_file(absolute_path));
  return parse_stack_file(root, absolute_path);
}

Result<std::vector<EnvFileDecl>> parse_env_files(const YamlNode& node) {
  std::vector<EnvFileDecl> out;
  std::vector<YamlNode> items;
  if (node.is_scalar())
    items.push_back(node);
  else if (node.is_sequence())
    items = node.items;
  else
    return error_at(node.where, "'env_file' must be a file name or a list of them, got " +
                                    std::string(describe(node.kind)));
  for (const auto& item : items) {
    EnvFileDecl decl;
    if (item.is_map()) {
      STACKIE_TRY(check_fields(item, {"path", "required"}, "env_file"));
      const YamlNode* path = item.find("path");
      if (path == nullptr) return error_at(item.where, "an 'env_file' entry needs a 'path'");
      STACKIE_TRY(expect_kind(*path, YamlNode::Kind::scalar, "env_file.path"));
      decl.path = *path;
      if (const YamlNode* required = item.find("required")) {
        STACKIE_TRY_ASSIGN(value, read_bool(*required, "env_file.required"));
        decl.required = value;
      }
    } else {
      STACKIE_TRY(expect_kind(item, YamlNode::Kind::scalar, "env_file"));
      decl.path = item;
    }
    if (decl.path.text.empty()) return error_at(decl.path.where, "'env_file' names no file");
    out.push_back(std::move(decl));
  }
  return out;
}

}  // namespace stackie
