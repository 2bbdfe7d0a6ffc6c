#include "stack/block_def.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "stack/signal_names.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

Result<NetworkMode> read_network(const YamlNode& node) {
  STACKIE_TRY_ASSIGN(text, read_string(node, "network"));
  Result<NetworkMode> mode = parse_network_mode(text);
  if (mode.ok()) return mode;
  return error_at(node.where,
                  mode.error().message + did_you_mean(text, {"none", "localhost", "host"}));
}

Result<Identity> read_identity(const YamlNode& node) {
  STACKIE_TRY_ASSIGN(text, read_string(node, "identity"));
  Result<Identity> identity = parse_identity(text);
  if (identity.ok()) return identity;
  return error_at(node.where, identity.error().message);
}

Result<std::vector<InitDecl>> parse_init(const YamlNode& node, std::string_view context);

// `run: [argv]`, or the older map form `run: {binary: PROGRAM, args: [ARGS]}` (the list is
// preferred).
Result<std::vector<YamlNode>> read_run(const YamlNode& value) {
  if (value.is_map()) {
    STACKIE_TRY(check_fields(value, {"binary", "args"}, "run"));
    const YamlNode* binary = value.find("binary");
    if (!binary) return error_at(value.where, "'run' in the map form needs 'binary'");
    STACKIE_TRY(expect_kind(*binary, YamlNode::Kind::scalar, "run.binary"));
    std::vector<YamlNode> argv = {*binary};
    if (const YamlNode* args = value.find("args")) {
      STACKIE_TRY_ASSIGN(rest, read_scalar_list(*args, "run.args"));
      for (auto& arg : rest) argv.push_back(std::move(arg));
    }
    return argv;
  }
  STACKIE_TRY_ASSIGN(argv, read_scalar_list(value, "run"));
  if (argv.empty()) return error_at(value.where, "empty 'run' in an init step");
  return argv;
}

Result<InitDecl> parse_init_step(const YamlNode& node, std::string_view context) {
  InitDecl step;
  step.where = node.where;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "init step"));
  STACKIE_TRY(
      check_fields(node, {"if", "run", "append_file"}, "an init step of " + std::string(context)));
  if (node.entries.size() != 1)
    return error_at(node.where, "an init step has exactly one of 'if', 'run', 'append_file'");
  const auto& [key, value] = node.entries.front();
  if (key.text == "run") {
    STACKIE_TRY_ASSIGN(argv, read_run(value));
    step.run = std::move(argv);
  } else if (key.text == "append_file") {
    STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, "append_file"));
    STACKIE_TRY(check_fields(value, {"path", "text", "content"}, "append_file"));
    const YamlNode* path = value.find("path");
    // `content` is the older spelling of `text`; both are read, `text` is preferred.
    const YamlNode* text = value.find("text") ? value.find("text") : value.find("content");
    if (value.find("text") && value.find("content"))
      return error_at(value.find("content")->where,
                      "'append_file' has both 'text' and 'content' (the same field)");
    if (!path || !text) return error_at(value.where, "'append_file' needs both 'path' and 'text'");
    STACKIE_TRY(expect_kind(*path, YamlNode::Kind::scalar, "append_file.path"));
    STACKIE_TRY(expect_kind(*text, YamlNode::Kind::scalar, "append_file.text"));
    step.append_path = *path;
    step.append_text = *text;
  } else {
    STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, "if"));
    STACKIE_TRY(check_fields(value, {"not_exists", "then"}, "an 'if' init step"));
    const YamlNode* guard = value.find("not_exists");
    const YamlNode* then = value.find("then");
    if (!guard || !then) return error_at(value.where, "'if' needs both 'not_exists' and 'then'");
    STACKIE_TRY(expect_kind(*guard, YamlNode::Kind::scalar, "if.not_exists"));
    step.if_not_exists = *guard;
    STACKIE_TRY_ASSIGN(steps, parse_init(*then, context));
    step.then = std::move(steps);
  }
  return step;
}

Result<std::vector<InitDecl>> parse_init(const YamlNode& node, std::string_view context) {
  std::vector<InitDecl> steps;
  if (node.is_null()) return steps;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::sequence, "init"));
  for (const auto& item : node.items) {
    STACKIE_TRY_ASSIGN(step, parse_init_step(item, context));
    steps.push_back(std::move(step));
  }
  return steps;
}

Result<std::vector<PathDecl>> parse_paths(const YamlNode& node) {
  std::vector<PathDecl> out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "paths"));
  for (const auto& [key, value] : node.entries) {
    STACKIE_TRY(check_name(key, "path name"));
    std::string what = "paths." + key.text;
    STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, what));
    STACKIE_TRY(check_fields(value, {"volume", "runtime"}, what));
    if (value.entries.size() != 1)
      return error_at(value.where, "'" + what + "' has exactly one of 'volume' or 'runtime'");
    const auto& [kind_key, sub] = value.entries.front();
    PathDecl path;
    path.name = key.text;
    path.where = key.where;
    path.kind = kind_key.text == "volume" ? PathDecl::Kind::volume : PathDecl::Kind::runtime;
    STACKIE_TRY(check_name(sub, kind_key.text + " name"));
    path.sub = sub.text;
    out.push_back(std::move(path));
  }
  return out;
}

Result<SandboxDecl> parse_sandbox(const YamlNode& node) {
  SandboxDecl out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "sandbox"));
  STACKIE_TRY(check_fields(node, {"read_only", "read_write", "network", "identity"}, "sandbox"));
  if (const YamlNode* ro = node.find("read_only")) {
    STACKIE_TRY_ASSIGN(list, read_scalar_list(*ro, "sandbox.read_only"));
    out.read_only = std::move(list);
  }
  if (const YamlNode* rw = node.find("read_write")) {
    STACKIE_TRY_ASSIGN(list, read_scalar_list(*rw, "sandbox.read_write"));
    out.read_write = std::move(list);
  }
  if (const YamlNode* network = node.find("network")) {
    STACKIE_TRY_ASSIGN(mode, read_network(*network));
    out.network = mode;
  }
  if (const YamlNode* identity = node.find("identity")) {
    STACKIE_TRY_ASSIGN(who, read_identity(*identity));
    out.identity = who;
  }
  return out;
}

}  // namespace

Result<std::vector<ProgramDecl>> parse_programs(const YamlNode& node, std::string_view field) {
  std::vector<ProgramDecl> out;
  if (node.is_null()) return out;
  std::string field_name(field);
  if (node.is_sequence() && field_name != "programs") {
    // `tools: [node, make]`: each a program found by its name alone.
    STACKIE_TRY_ASSIGN(names, read_scalar_list(node, field_name));
    for (const auto& name : names) {
      if (name.text.empty() || name.text.find('/') != std::string::npos)
        return error_at(name.where, "'" + field_name + "' names a program, got '" + name.text +
                                        "' (a name found on PATH, or NAME: {search: [DIR]})");
      out.push_back({name.text, {name.text}, {}, {}, {}, name.where});
    }
    return out;
  }
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, field_name));
  for (const auto& [key, value] : node.entries) {
    ProgramDecl program;
    program.name = key.text;
    program.where = key.where;
    std::string what = field_name + "." + key.text;
    if (!value.is_null()) {
      STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, what));
      STACKIE_TRY(check_fields(value, {"names", "search", "packages", "version_packages"}, what));
      if (const YamlNode* names = value.find("names")) {
        STACKIE_TRY_ASSIGN(list, read_string_list(*names, what + ".names", true));
        program.names = std::move(list);
      }
      if (const YamlNode* search = value.find("search")) {
        STACKIE_TRY_ASSIGN(list, read_string_list(*search, what + ".search", true));
        program.search = std::move(list);
      }
      if (const YamlNode* packages = value.find("packages")) {
        STACKIE_TRY(check_fields(*packages, {"apt", "brew", "winget"}, what + ".packages"));
        STACKIE_TRY_ASSIGN(map, read_scalar_map(*packages, what + ".packages"));
        for (auto& [manager, package] : map) program.packages[manager] = package.text;
      }
      if (const YamlNode* packages = value.find("version_packages")) {
        STACKIE_TRY(check_fields(*packages, {"apt", "brew", "winget"}, what + ".version_packages"));
        STACKIE_TRY_ASSIGN(map, read_scalar_map(*packages, what + ".version_packages"));
        for (auto& [manager, package] : map) program.version_packages[manager] = package.text;
      }
    }
    if (program.names.empty()) program.names.push_back(program.name);
    out.push_back(std::move(program));
  }
  return out;
}

Status check_name(const YamlNode& key, std::string_view what) {
  const std::string& name = key.text;
  // Not ending in '.' either: Windows drops a trailing dot, so "db." and "db" would be one
  // directory (one sandbox's storage and /tmp for two blocks).
  bool ok = !name.empty() && name[0] != '.' && name[0] != '-' && name.back() != '.';
  for (char c : name)
    ok = ok &&
         ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
  if (ok) return {};
  return error_at(key.where, "invalid " + std::string(what) + " '" + name +
                                 "': use only a-z, 0-9, '.', '_' and '-', not starting with "
                                 "'.' or '-' nor ending with '.' (names become directory names)");
}

std::string stop_signal_name(int signal) {
  for (const auto& entry : known_signals())
    if (entry.number == signal) return entry.name;
  return std::to_string(signal);
}

Result<int> parse_signal(const YamlNode& node) {
  if (node.is_scalar()) {
    std::string name = node.text;
    if (name.rfind("SIG", 0) != 0) name = "SIG" + name;
    for (const auto& entry : known_signals())
      if (name == entry.name) return entry.number;
  }
  return error_at(node.where,
                  "unknown signal " +
                      (node.is_scalar() ? quoted(node.text) : std::string(describe(node.kind))) +
                      " (expected e.g. SIGTERM, SIGINT, SIGQUIT)");
}

Result<std::vector<ServeDecl>> parse_serves(const YamlNode& node, std::string_view context,
                                            bool require_port) {
  std::vector<ServeDecl> out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "serves"));
  for (const auto& [key, value] : node.entries) {
    STACKIE_TRY(check_name(key, "port name"));
    ServeDecl serve;
    serve.name = key.text;
    serve.where = key.where;
    serve.port_where = key.where;
    std::string what = "serves." + key.text;
    if (value.is_scalar()) {  // `NAME: 8080` shorthand
      STACKIE_TRY_ASSIGN(port, read_int(value, what));
      serve.port = port;
      serve.port_where = value.where;
    } else {
      if (!value.is_null()) {
        STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, what));
        STACKIE_TRY(check_fields(value, {"port", "type", "host_port"},
                                 what + " of " + std::string(context)));
      }
      if (const YamlNode* port = value.find("port")) {
        STACKIE_TRY_ASSIGN(number, read_int(*port, what + ".port"));
        serve.port = number;
        serve.port_where = port->where;
      }
      if (const YamlNode* host_port = value.find("host_port")) {
        STACKIE_TRY_ASSIGN(number, read_int(*host_port, what + ".host_port"));
        if (number < 1 || number > 65535)
          return error_at(host_port->where,
                          "port " + std::to_string(number) + " out of range (1-65535)");
        serve.host_port = number;
      }
      if (const YamlNode* type = value.find("type")) {
        STACKIE_TRY_ASSIGN(text, read_string(*type, what + ".type"));
        serve.type = text;
      }
    }
    if (serve.port == 0 && require_port)
      return error_at(key.where, "'" + what + "' needs a 'port'");
    if (serve.port != 0 && (serve.port < 1 || serve.port > 65535))
      return error_at(serve.port_where,
                      "port " + std::to_string(serve.port) + " out of range (1-65535)");
    out.push_back(std::move(serve));
  }
  return out;
}

Result<HealthDecl> parse_health(const YamlNode& node, std::string_view context) {
  HealthDecl health;
  health.where = node.where;
  // `health: none`: no check (a stack turning off its definition's; compose's test: NONE).
  if (node.is_scalar() && node.text == "none") return health;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "health"));
  STACKIE_TRY(
      check_fields(node, {"tcp", "http", "exec", "interval", "timeout", "retries", "start_period"},
                   "health of " + std::string(context)));
  int kinds = 0;
  if (const YamlNode* tcp = node.find("tcp")) {
    ++kinds;
    health.kind = HealthCheck::Kind::tcp;
    STACKIE_TRY_ASSIGN(port, read_string(*tcp, "health.tcp"));
    health.port_name = port;
    health.port_where = tcp->where;
  }
  if (const YamlNode* http = node.find("http")) {
    ++kinds;
    health.kind = HealthCheck::Kind::http;
    STACKIE_TRY(expect_kind(*http, YamlNode::Kind::map, "health.http"));
    STACKIE_TRY(check_fields(*http, {"port", "path", "status"}, "health.http"));
    const YamlNode* port = http->find("port");
    if (!port) return error_at(http->where, "'health.http' needs a 'port' (a serves name)");
    STACKIE_TRY_ASSIGN(port_name, read_string(*port, "health.http.port"));
    health.port_name = port_name;
    health.port_where = port->where;
    health.http_path.kind = YamlNode::Kind::scalar;
    health.http_path.text = "/";
    health.http_path.where = http->where;
    if (const YamlNode* path = http->find("path")) {
      STACKIE_TRY(expect_kind(*path, YamlNode::Kind::scalar, "health.http.path"));
      health.http_path = *path;
    }
    if (const YamlNode* status = http->find("status")) {
      STACKIE_TRY_ASSIGN(code, read_int(*status, "health.http.status"));
      if (code < 100 || code > 599)
        return error_at(status->where,
                        "HTTP status " + std::to_string(code) + " out of range (100-599)");
      health.http_status = code;
    }
  }
  if (const YamlNode* exec = node.find("exec")) {
    ++kinds;
    health.kind = HealthCheck::Kind::exec;
    STACKIE_TRY_ASSIGN(argv, read_scalar_list(*exec, "health.exec"));
    if (argv.empty()) return error_at(exec->where, "empty 'health.exec' command");
    health.exec = std::move(argv);
  }
  if (kinds != 1)
    return error_at(node.where, "'health' has exactly one of 'tcp', 'http' or 'exec'");
  if (const YamlNode* v = node.find("interval")) {
    STACKIE_TRY_ASSIGN(ms, read_duration_ms(*v, "health.interval"));
    health.interval_ms = ms;
  }
  if (const YamlNode* v = node.find("timeout")) {
    STACKIE_TRY_ASSIGN(ms, read_duration_ms(*v, "health.timeout"));
    health.timeout_ms = ms;
  }
  if (const YamlNode* v = node.find("start_period")) {
    STACKIE_TRY_ASSIGN(ms, read_duration_ms(*v, "health.start_period"));
    health.start_period_ms = ms;
  }
  if (const YamlNode* v = node.find("retries")) {
    STACKIE_TRY_ASSIGN(retries, read_int(*v, "health.retries"));
    if (retries < 1) return error_at(v->where, "'health.retries' must be at least 1");
    health.retries = retries;
  }
  return health;
}

namespace {

// A scalar limit: "unlimited" is 0, else `parse` reads it; errors at the value, naming the key.
template <typename T, typename Parse>
Result<T> read_limit(const YamlNode& node, std::string_view key, Parse parse) {
  std::string what = "limits." + std::string(key);
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::scalar, what));
  if (node.text == "unlimited") return T{0};
  auto value = parse(node.text);
  if (!value.ok()) return error_at(node.where, "'" + what + "': " + value.error().message);
  return static_cast<T>(*value);
}

Result<int> parse_pid_count(std::string_view text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value <= 0)
    return Error{0, "'" + std::string(text) + "' is not a number of processes"};
  return value;
}

// Plain scalars YAML 1.1/1.2 resolve to a number, a boolean or null.
bool looks_like_yaml_literal(const std::string& text) {
  static const char* const words[] = {"true",  "false", "yes", "no", "on",  "off", "null", "~",
                                      "True",  "False", "Yes", "No", "On",  "Off", "Null", "TRUE",
                                      "FALSE", "YES",   "NO",  "ON", "OFF", "NULL"};
  for (const char* word : words)
    if (text == word) return true;
  char* end = nullptr;
  errno = 0;
  (void)std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0' &&
         text.find_first_of("0123456789") != std::string::npos;
}

}  // namespace

Result<LimitsDecl> parse_limits(const YamlNode& node) {
  LimitsDecl limits;
  limits.where = node.where;
  if (node.is_null()) return limits;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "limits"));
  STACKIE_TRY(check_fields(node, {"memory", "pids", "cpu", "shm"}, "limits"));
  if (const YamlNode* v = node.find("memory")) {
    STACKIE_TRY_ASSIGN(bytes, read_limit<uint64_t>(*v, "memory", parse_byte_size));
    if (bytes != 0 && bytes < kMinMemoryBytes)
      return error_at(v->where, "'limits.memory' " + format_byte_size(bytes) +
                                    " is below the minimum " + format_byte_size(kMinMemoryBytes));
    limits.memory_bytes = bytes;
  }
  if (const YamlNode* v = node.find("pids")) {
    STACKIE_TRY_ASSIGN(pids, read_limit<int>(*v, "pids", parse_pid_count));
    if (pids != 0 && pids < kMinPids)
      return error_at(v->where, "'limits.pids' " + std::to_string(pids) + " is below the minimum " +
                                    std::to_string(kMinPids) +
                                    " (the sandbox's monitor and init count)");
    limits.pids = pids;
  }
  if (const YamlNode* v = node.find("cpu")) {
    STACKIE_TRY_ASSIGN(millis, read_limit<int>(*v, "cpu", parse_cpu_millis));
    limits.cpu_millis = millis;
  }
  if (const YamlNode* v = node.find("shm")) {
    if (v->is_scalar() && v->text == "unlimited")
      return error_at(v->where, "'limits.shm' is the size of a tmpfs: give a size (like 64MiB)");
    STACKIE_TRY_ASSIGN(bytes, read_limit<uint64_t>(*v, "shm", parse_byte_size));
    if (bytes < kMinShmBytes)
      return error_at(v->where, "'limits.shm' " + format_byte_size(bytes) +
                                    " is below the minimum " + format_byte_size(kMinShmBytes));
    limits.shm_bytes = bytes;
  }
  return limits;
}

ResourceLimits merge_limits(const LimitsDecl* definition, const LimitsDecl& stack) {
  ResourceLimits limits = default_limits();
  bool shm_given = false;
  for (const LimitsDecl* decl : {definition, &stack}) {
    if (decl == nullptr) continue;
    if (decl->memory_bytes) {
      limits.memory_bytes = *decl->memory_bytes;
      limits.memory_given = *decl->memory_bytes != 0;
    }
    if (decl->pids) limits.pids = *decl->pids;
    if (decl->cpu_millis) limits.cpu_millis = *decl->cpu_millis;
    if (decl->shm_bytes) {
      limits.shm_bytes = *decl->shm_bytes;
      shm_given = true;
    }
  }
  if (!shm_given) limits.shm_bytes = default_shm_bytes(limits.memory_bytes);
  return limits;
}

Result<CommandDecl> parse_command(const YamlNode& node, std::string_view context) {
  CommandDecl command;
  command.present = true;
  command.where = node.where;
  if (node.is_scalar()) {
    if (node.text.find_first_not_of(" \t\n") == std::string::npos)
      return error_at(node.where, "empty command for " + std::string(context));
    // `command: 42` or `command: true` is a YAML number or boolean, not a command line that
    // was meant: refuse it rather than run `sh -c 42` and retry its exit 127.
    if (node.style == YamlNode::Style::plain && looks_like_yaml_literal(node.text))
      return error_at(node.where, "'command' must be a string or a list of strings, got '" +
                                      node.text +
                                      "' (a YAML number or boolean; quote it if a "
                                      "program has that name)");
    command.shell = true;
    // A string is a shell command line, as in a Procfile.
    YamlNode shell;
    shell.kind = YamlNode::Kind::scalar;
    shell.where = node.where;
    shell.text = "/bin/sh";
    YamlNode dash_c = shell;
    dash_c.text = "-c";
    command.argv = {shell, dash_c, node};
    return command;
  }
  if (node.is_null()) return error_at(node.where, "empty command for " + std::string(context));
  STACKIE_TRY_ASSIGN(argv, read_scalar_list(node, "command"));
  if (argv.empty() || argv.front().text.empty())
    return error_at(node.where, "empty command for " + std::string(context));
  command.argv = std::move(argv);
  return command;
}

Result<BlockDef> parse_block_def(const YamlNode& root, const std::string& path,
                                 std::string_view expected_name) {
  if (!root.is_map() || root.entries.empty())
    return error_at(root.where,
                    "a block definition has one top-level key, the block name, holding a map");
  if (root.entries.size() != 1)
    return error_at(root.entries[1].first.where,
                    "second top-level key '" + root.entries[1].first.text +
                        "'; a block definition has exactly one, the block name");
  const auto& [key, body] = root.entries.front();
  STACKIE_TRY(check_name(key, "block name"));
  if (!expected_name.empty() && key.text != expected_name)
    return error_at(key.where, "this file defines '" + key.text + "', expected '" +
                                   std::string(expected_name) + "'");
  BlockDef def;
  def.name = key.text;
  def.file = path;
  def.where = key.where;
  std::string context = "block '" + def.name + "'";
  if (!body.is_null()) STACKIE_TRY(expect_kind(body, YamlNode::Kind::map, def.name));
  if (const YamlNode* v = body.is_null() ? nullptr : body.find("alias")) {
    STACKIE_TRY(check_fields(body, {"alias"}, context + " (an alias holds nothing else)"));
    STACKIE_TRY(check_name(*v, "alias"));
    if (v->text == def.name)
      return error_at(v->where, "block '" + def.name + "' is an alias of itself");
    def.alias = v->text;
    return def;
  }
  STACKIE_TRY(
      check_fields(body,
                   {"description", "vars", "serves", "paths", "programs", "environment", "init",
                    "command", "health", "stop_signal", "stop_timeout", "sandbox", "limits"},
                   context));
  if (const YamlNode* v = body.find("description")) {
    STACKIE_TRY_ASSIGN(text, read_string(*v, "description"));
    def.description = text;
  }
  if (const YamlNode* v = body.find("vars")) {
    STACKIE_TRY_ASSIGN(vars, read_scalar_map(*v, "vars"));
    def.vars = std::move(vars);
  }
  if (const YamlNode* v = body.find("serves")) {
    STACKIE_TRY_ASSIGN(serves, parse_serves(*v, context, true));
    def.serves = std::move(serves);
  }
  if (const YamlNode* v = body.find("paths")) {
    STACKIE_TRY_ASSIGN(paths, parse_paths(*v));
    def.paths = std::move(paths);
  }
  if (const YamlNode* v = body.find("programs")) {
    STACKIE_TRY_ASSIGN(programs, parse_programs(*v));
    def.programs = std::move(programs);
  }
  if (const YamlNode* v = body.find("environment")) {
    STACKIE_TRY_ASSIGN(env, read_scalar_map(*v, "environment"));
    def.environment = std::move(env);
  }
  if (const YamlNode* v = body.find("init")) {
    STACKIE_TRY_ASSIGN(init, parse_init(*v, context));
    def.init = std::move(init);
  }
  if (const YamlNode* v = body.find("command")) {
    STACKIE_TRY_ASSIGN(command, parse_command(*v, context));
    def.command = std::move(command);
  } else {
    return error_at(key.where, "block definition '" + def.name + "' has no 'command'");
  }
  if (const YamlNode* v = body.find("health")) {
    STACKIE_TRY_ASSIGN(health, parse_health(*v, context));
    def.health = std::move(health);
  }
  if (const YamlNode* v = body.find("stop_signal")) {
    STACKIE_TRY_ASSIGN(signal, parse_signal(*v));
    def.stop_signal = signal;
  }
  if (const YamlNode* v = body.find("stop_timeout")) {
    STACKIE_TRY_ASSIGN(ms, read_duration_ms(*v, "stop_timeout"));
    def.stop_timeout_ms = ms;
  }
  if (const YamlNode* v = body.find("sandbox")) {
    STACKIE_TRY_ASSIGN(sandbox, parse_sandbox(*v));
    def.sandbox = std::move(sandbox);
  }
  if (const YamlNode* v = body.find("limits")) {
    STACKIE_TRY_ASSIGN(limits, parse_limits(*v));
    def.limits = std::move(limits);
  }
  return def;
}

Result<BlockDef> load_block_def(const std::string& path, std::string_view expected_name) {
  STACKIE_TRY_ASSIGN(root, parse_yaml_file(path));
  return parse_block_def(root, path, expected_name);
}

}  // namespace stackie
