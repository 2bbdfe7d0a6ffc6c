// Compose YAML -> ComposeProject: the keys of the common subset read with their positions,
// every other key one warning. The mapping onto blocks is compose_map.cc.
#include <algorithm>
#include <cctype>

#include "base/fs_path.h"
#include "stack/compose_file.h"
#include "stack/compose_values.h"
#include "stack/stack_file.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

constexpr const char* kNetworksNote =
    "'networks' is not needed: blocks reach each other through consumes, and inside each "
    "sandbox a service's name resolves to the port it serves (see stackie-compose(7))";

std::string parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Compose's project name from a directory: lower case, [a-z0-9_-], starting alphanumeric.
std::string project_name_from(const std::string& dir) {
  std::string out;
  for (char c : base_name(dir)) {
    char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '_' ||
        lower == '-')
      out += lower;
  }
  while (!out.empty() && (out[0] == '-' || out[0] == '_')) out.erase(0, 1);
  return out.empty() ? "compose" : out;
}

class Parser {
 public:
  Parser(ComposeProject& project, const SecretKnown& known) : project_(project), known_(known) {}

  void warn(const SourceLocation& where, const std::string& text) {
    project_.warnings.push_back(compose_warning(where, text));
  }

  Result<ComposeCommand> command(const YamlNode& node, const std::string& what) {
    ComposeCommand out;
    out.present = true;
    out.where = node.where;
    if (node.is_scalar()) {
      STACKIE_TRY_ASSIGN(line, translate_interpolation(node, known_));
      out.shell = true;
      out.argv = {make_scalar("/bin/sh", node.where), make_scalar("-c", node.where), line};
      return out;
    }
    STACKIE_TRY_ASSIGN(items, read_scalar_list(node, what));
    if (items.empty()) return error_at(node.where, "empty '" + what + "'");
    for (auto& item : items) {
      STACKIE_TRY_ASSIGN(translated, translate_interpolation(item, known_));
      out.argv.push_back(std::move(translated));
    }
    return out;
  }

  Status ports(const YamlNode& node, const std::string& what, std::vector<ComposePort>& out) {
    STACKIE_TRY(expect_kind(node, YamlNode::Kind::sequence, what));
    for (const auto& item : node.items) {
      STACKIE_TRY_ASSIGN(spec, parse_compose_port(item));
      if (spec.protocol != "tcp") {
        warn(item.where,
             "'" + what + "': " + spec.protocol + " port not mapped (Stackie forwards TCP only)");
        continue;
      }
      for (const auto& port : spec.ports) out.push_back(port);
    }
    return {};
  }

  Status environment(const YamlNode& node, ComposeService& service) {
    auto add = [&](const std::string& name, const YamlNode& value, const SourceLocation& where) {
      service.environment.emplace_back(name, value);
      service.env_where.push_back(where);
    };
    if (node.is_map()) {
      for (const auto& [key, value] : node.entries) {
        if (value.is_null()) {  // `KEY:` passes the host's value through, when it has one
          pass_through(key.text, key.where, service);
          continue;
        }
        STACKIE_TRY(expect_kind(value, YamlNode::Kind::scalar, "environment." + key.text));
        STACKIE_TRY_ASSIGN(translated, translate_interpolation(value, known_));
        add(key.text, translated, key.where);
      }
      return {};
    }
    STACKIE_TRY_ASSIGN(items, read_scalar_list(node, "environment"));
    for (const auto& item : items) {
      size_t equals = item.text.find('=');
      if (equals == std::string::npos) {
        pass_through(item.text, item.where, service);
        continue;
      }
      YamlNode value = item;
      value.text = item.text.substr(equals + 1);
      value.where = item.at_offset(equals + 1);
      STACKIE_TRY_ASSIGN(translated, translate_interpolation(value, known_));
      add(item.text.substr(0, equals), translated, item.where);
    }
    return {};
  }

  void pass_through(const std::string& name, const SourceLocation& where, ComposeService& service) {
    if (!known_(name)) {
      warn(where, "environment '" + name +
                      "' has no value here (not in the environment or .env): left unset");
      return;
    }
    service.environment.emplace_back(name, make_scalar("${secrets." + name + "}", where));
    service.env_where.push_back(where);
  }

  Status depends_on(const YamlNode& node, ComposeService& service) {
    if (!node.is_map()) {
      STACKIE_TRY_ASSIGN(names, read_scalar_list(node, "depends_on"));
      for (const auto& name : names)
        service.depends_on.push_back({name.text, DependCondition::healthy, false, name.where});
      return {};
    }
    for (const auto& [key, value] : node.entries) {
      ComposeDepend depend{key.text, DependCondition::started, true, key.where};
      if (!value.is_null()) STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, key.text));
      for (const auto& [field, setting] : value.entries) {
        if (field.text == "condition") {
          const std::string& text = setting.text;
          if (text == "service_started")
            depend.condition = DependCondition::started;
          else if (text == "service_healthy")
            depend.condition = DependCondition::healthy;
          else if (text == "service_completed_successfully")
            depend.condition = DependCondition::completed_successfully;
          else
            return error_at(setting.where, "unknown condition '" + text +
                                               "' (expected service_started, service_healthy or "
                                               "service_completed_successfully)");
        } else {
          warn(field.where, "'depends_on." + key.text + "." + field.text + "' is not mapped");
        }
      }
      service.depends_on.push_back(depend);
    }
    return {};
  }

  Result<ComposeHealth> healthcheck(const YamlNode& node) {
    ComposeHealth health;
    health.where = node.where;
    STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "healthcheck"));
    for (const auto& [key, value] : node.entries) {
      if (key.text == "test") {
        health.test_where = value.where;
        if (value.is_scalar()) {
          STACKIE_TRY_ASSIGN(line, translate_interpolation(value, known_));
          health.exec = {make_scalar("/bin/sh", value.where), make_scalar("-c", value.where), line};
          continue;
        }
        STACKIE_TRY_ASSIGN(items, read_scalar_list(value, "healthcheck.test"));
        if (items.empty()) return error_at(value.where, "empty 'healthcheck.test'");
        const std::string& form = items.front().text;
        if (form == "NONE") {
          health.disabled = true;
        } else if (form == "CMD" && items.size() > 1) {
          for (size_t i = 1; i < items.size(); ++i) {
            STACKIE_TRY_ASSIGN(arg, translate_interpolation(items[i], known_));
            health.exec.push_back(std::move(arg));
          }
        } else if (form == "CMD-SHELL" && items.size() == 2) {
          STACKIE_TRY_ASSIGN(line, translate_interpolation(items[1], known_));
          health.exec = {make_scalar("/bin/sh", items[1].where), make_scalar("-c", items[1].where),
                         line};
        } else {
          return error_at(value.where,
                          "'healthcheck.test' must be [\"CMD\", PROGRAM, ARGS...], "
                          "[\"CMD-SHELL\", LINE], [\"NONE\"] or a string");
        }
      } else if (key.text == "disable") {
        health.disabled = health.disabled || value.text == "true";
      } else if (key.text == "interval") {
        health.interval = value;
      } else if (key.text == "timeout") {
        health.timeout = value;
      } else if (key.text == "retries") {
        health.retries = value;
      } else if (key.text == "start_period") {
        health.start_period = value;
      } else {
        warn(key.where, "'healthcheck." + key.text + "' is not mapped");
      }
    }
    if (!health.disabled && health.exec.empty())
      return error_at(node.where, "'healthcheck' needs a 'test' (or disable: true)");
    return health;
  }

  Status volumes(const YamlNode& node, ComposeService& service) {
    STACKIE_TRY(expect_kind(node, YamlNode::Kind::sequence, "volumes"));
    for (const auto& item : node.items) {
      ComposeVolume volume;
      volume.where = item.where;
      if (item.is_map()) {
        for (const auto& [key, value] : item.entries) {
          if (key.text == "source")
            volume.source = value.text;
          else if (key.text == "target")
            volume.target = value.text;
          else if (key.text == "read_only")
            volume.read_only = value.text == "true";
          else if (key.text == "type")
            volume.kind =
                value.text == "bind" ? ComposeVolume::Kind::bind : ComposeVolume::Kind::named;
          else
            warn(key.where, "'volumes." + key.text + "' is not mapped");
        }
        if (volume.source.empty()) volume.kind = ComposeVolume::Kind::anonymous;
      } else {
        STACKIE_TRY(expect_kind(item, YamlNode::Kind::scalar, "volumes"));
        std::vector<std::string> parts;
        size_t start = 0;
        while (true) {
          size_t colon = item.text.find(':', start);
          parts.push_back(item.text.substr(start, colon - start));
          if (colon == std::string::npos) break;
          start = colon + 1;
        }
        if (parts.size() == 1) {
          volume.kind = ComposeVolume::Kind::anonymous;
          volume.target = parts[0];
        } else {
          volume.source = parts[0];
          volume.target = parts[1];
          if (parts.size() > 2) {
            if (parts[2] == "ro")
              volume.read_only = true;
            else if (parts[2] != "rw")
              warn(item.at_offset(item.text.size() - parts[2].size()),
                   "volume option '" + parts[2] + "' is not mapped");
          }
          bool path_like =
              !volume.source.empty() && (volume.source[0] == '.' || volume.source[0] == '/' ||
                                         volume.source[0] == '~' || volume.source[0] == '$');
          volume.kind = path_like ? ComposeVolume::Kind::bind : ComposeVolume::Kind::named;
        }
      }
      if (volume.target.empty())
        return error_at(item.where, "a volume needs a target path inside the container");
      service.volumes.push_back(volume);
    }
    return {};
  }

  Status stackie_extension(const YamlNode& node, ComposeService& service) {
    STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "x-stackie"));
    STACKIE_TRY(check_fields(node, {"command", "path", "network", "secrets"}, "x-stackie"));
    if (const YamlNode* v = node.find("command")) {
      STACKIE_TRY_ASSIGN(parsed, command(*v, "x-stackie.command"));
      service.stackie_command = std::move(parsed);
    }
    if (const YamlNode* v = node.find("path")) {
      STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "x-stackie.path"));
      service.stackie_path = *v;
    }
    if (const YamlNode* v = node.find("network")) {
      STACKIE_TRY(expect_kind(*v, YamlNode::Kind::scalar, "x-stackie.network"));
      service.stackie_network = *v;
    }
    if (const YamlNode* v = node.find("secrets")) {
      STACKIE_TRY_ASSIGN(names, read_scalar_list(*v, "x-stackie.secrets"));
      for (const auto& name : names) STACKIE_TRY(check_secret_name(name));
      service.stackie_secrets = std::move(names);
    }
    return {};
  }

  Result<ComposeService> service(const YamlNode& key, const YamlNode& body) {
    ComposeService service;
    service.name = key.text;
    service.where = key.where;
    STACKIE_TRY(check_name(key, "service name"));
    if (body.is_null()) return service;
    STACKIE_TRY(expect_kind(body, YamlNode::Kind::map, key.text));
    for (const auto& [field, value] : body.entries) {
      const std::string& name = field.text;
      if (name == "image") {
        STACKIE_TRY(expect_kind(value, YamlNode::Kind::scalar, "image"));
        service.image = value;
      } else if (name == "build") {
        if (value.is_scalar()) {
          service.build_context = value;
        } else {
          STACKIE_TRY(expect_kind(value, YamlNode::Kind::map, "build"));
          for (const auto& [build_key, build_value] : value.entries)
            if (build_key.text == "context")
              service.build_context = build_value;
            else
              warn(build_key.where, "'build." + build_key.text +
                                        "' is not mapped (Stackie runs no image build; the "
                                        "block runs in the build context)");
          if (!service.build_context) service.build_context = make_scalar(".", value.where);
        }
      } else if (name == "command") {
        STACKIE_TRY_ASSIGN(parsed, command(value, "command"));
        service.command = std::move(parsed);
      } else if (name == "entrypoint") {
        STACKIE_TRY_ASSIGN(parsed, command(value, "entrypoint"));
        service.entrypoint = std::move(parsed);
      } else if (name == "ports") {
        STACKIE_TRY(ports(value, "ports", service.ports));
      } else if (name == "expose") {
        STACKIE_TRY(ports(value, "expose", service.expose));
        for (auto& port : service.expose) port.host = 0;
      } else if (name == "environment") {
        STACKIE_TRY(environment(value, service));
      } else if (name == "env_file") {
        STACKIE_TRY_ASSIGN(files, parse_env_files(value));
        service.env_files = std::move(files);
      } else if (name == "profiles") {
        STACKIE_TRY_ASSIGN(list, read_scalar_list(value, "profiles"));
        service.profiles = std::move(list);
      } else if (name == "depends_on") {
        STACKIE_TRY(depends_on(value, service));
      } else if (name == "healthcheck") {
        STACKIE_TRY_ASSIGN(health, healthcheck(value));
        service.health = std::move(health);
      } else if (name == "restart") {
        service.restart = value;
      } else if (name == "working_dir") {
        service.working_dir = value;
      } else if (name == "stop_signal") {
        service.stop_signal = value;
      } else if (name == "stop_grace_period") {
        service.stop_grace_period = value;
      } else if (name == "volumes") {
        STACKIE_TRY(volumes(value, service));
      } else if (name == "x-stackie") {
        STACKIE_TRY(stackie_extension(value, service));
      } else if (name.rfind("x-", 0) == 0) {
        continue;  // an extension of another tool: compose itself ignores these
      } else if (name == "networks" || name == "network_mode" || name == "links" ||
                 name == "hostname") {
        warn(field.where, "'" + name + "' of service '" + service.name + "': " + kNetworksNote);
      } else if (name == "container_name") {
        warn(field.where, "'container_name' is not mapped: the block's sandbox is named " +
                              std::string("<stack>-") + service.name);
      } else {
        warn(field.where, "'" + name + "' of service '" + service.name + "' is not mapped");
      }
    }
    return service;
  }

  Status top_level_volumes(const YamlNode& node) {
    if (node.is_null()) return {};
    STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, "volumes"));
    for (const auto& [key, value] : node.entries) {
      project_.volumes.push_back(key.text);
      for (const auto& [field, setting] : value.entries)
        if (field.text != "name")
          warn(field.where, "'volumes." + key.text + "." + field.text +
                                "' is not mapped (a Stackie volume is a directory under the "
                                "storage root)");
    }
    return {};
  }

 private:
  ComposeProject& project_;
  const SecretKnown& known_;
};

}  // namespace

const std::vector<std::string>& compose_file_names() {
  static const std::vector<std::string> names = {"compose.yaml", "compose.yml",
                                                 "docker-compose.yaml", "docker-compose.yml"};
  return names;
}

bool looks_like_compose(const YamlNode& root) {
  if (!root.is_map()) return false;
  const YamlNode* services = root.find("services");
  if (services == nullptr) return false;
  // A stack named "services" holds `blocks`; a compose file's services never do.
  return root.entries.size() > 1 || !services->is_map() || services->find("blocks") == nullptr;
}

std::string compose_warning(const SourceLocation& where, const std::string& text) {
  return format_location(where) + ": warning: " + text;
}

Result<ComposeProject> parse_compose(const YamlNode& parsed, const std::string& absolute_path,
                                     const SecretKnown& known) {
  YamlNode root = parsed;
  apply_merge_keys(root);
  ComposeProject project;
  project.file = absolute_path;
  project.dir = parent_dir(absolute_path);
  project.where = root.where;
  project.name = project_name_from(project.dir);
  Parser parser(project, known);
  const YamlNode* services = nullptr;
  for (const auto& [key, value] : root.entries) {
    const std::string& name = key.text;
    if (name == "services") {
      services = &value;
    } else if (name == "name") {
      STACKIE_TRY(expect_kind(value, YamlNode::Kind::scalar, "name"));
      YamlNode checked = value;
      STACKIE_TRY(check_name(checked, "project name"));
      project.name = value.text;
    } else if (name == "volumes") {
      STACKIE_TRY(parser.top_level_volumes(value));
    } else if (name == "networks") {
      parser.warn(key.where, kNetworksNote);
    } else if (name == "version") {
      parser.warn(key.where, "'version' is ignored (obsolete in the Compose Specification)");
    } else if (name.rfind("x-", 0) == 0) {
      continue;  // extension fields (often anchors for `<<:`): compose ignores them too
    } else {
      parser.warn(key.where, "top-level '" + name + "' is not mapped");
    }
  }
  if (services == nullptr || !services->is_map() || services->entries.empty())
    return error_at(root.where, "a Compose file needs 'services' with at least one service");
  for (const auto& [key, body] : services->entries) {
    STACKIE_TRY_ASSIGN(service, parser.service(key, body));
    project.services.push_back(std::move(service));
  }
  return project;
}

}  // namespace stackie
