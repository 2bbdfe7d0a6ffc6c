// ComposeProject -> StackFile: each service becomes a block. An image the catalog knows is an
// instance of that catalog block (its documented environment mapped onto the block's vars);
// anything else runs its command natively as a block of the project. The names services use
// of each other become consumes, so `db:5432` in an app's environment reaches the db block.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "base/fs_path.h"
#include "stack/compose_file.h"
#include "stack/compose_values.h"
#include "stack/env_file.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

// What Stackie knows of the official images of its catalog blocks: the image environment
// that maps onto the block's vars, and where the image keeps its data (the block's `data`
// path). Other catalog blocks match by repository name, with no environment mapped.
struct KnownImage {
  std::vector<std::string> repositories;
  std::string block;
  std::vector<std::pair<std::string, std::string>> env_to_var;
  std::vector<std::string> data_dirs;
  // Image variables that have no meaning for the native server, and why.
  std::vector<std::pair<std::string, std::string>> env_explained;
};

const std::vector<KnownImage>& known_images() {
  static const std::vector<KnownImage> images = {
      {{"postgres", "postgresql"},
       "stackie.postgres",
       {{"POSTGRES_PASSWORD", "password"}, {"POSTGRES_USER", "user"}, {"POSTGRES_DB", "database"}},
       {"/var/lib/postgresql/data", "/var/lib/postgresql"},
       {{"PGDATA", "the block keeps its cluster in its own data volume"},
        {"POSTGRES_HOST_AUTH_METHOD", "the block always takes a password over TCP (SCRAM)"}}},
      {{"redis", "redis-stack-server"},
       "stackie.redis",
       {},
       {"/data"},
       {{"REDIS_PASSWORD",
         "the redis block takes no password: only blocks that consume it can reach it"}}},
  };
  return images;
}

// Catalog blocks that a compose service cannot become, and why: what they need has no compose
// form. Mapping such an image anyway gave a block that loaded and then failed at `up`.
const std::string* why_not_from_compose(const std::string& repository) {
  static const std::vector<std::pair<std::string, std::string>> refused = {
      {"nginx",
       "stackie.nginx is a reverse proxy set up by its vars.routes (\"/api/ -> api\"), which a "
       "compose file has no way to say, and it does not read an nginx.conf of yours"},
  };
  for (const auto& [name, why] : refused)
    if (name == repository) return &why;
  return nullptr;
}

const KnownImage* find_known(const std::string& repository) {
  for (const auto& image : known_images())
    for (const auto& name : image.repositories)
      if (name == repository) return &image;
  return nullptr;
}

// Any character a host name cannot hold around a service name ends the word.
bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// Whether `text` names `host` as a word ("postgres://db:5432/app", "redis://cache", "db").
bool mentions_host(const std::string& text, const std::string& host) {
  for (size_t at = text.find(host); at != std::string::npos; at = text.find(host, at + 1)) {
    bool start = at == 0 || !is_host_char(text[at - 1]);
    size_t end = at + host.size();
    // "db.example" is another host; a trailing '.' ending a sentence is still this one.
    bool finish = end == text.size() || !is_host_char(text[end]) ||
                  (text[end] == '.' && (end + 1 == text.size() || !is_host_char(text[end + 1])));
    if (start && finish) return true;
  }
  return false;
}

// A volume name as a Stackie path name: [a-z0-9._-].
std::string path_name(const std::string& text) {
  std::string out;
  for (char c : text) {
    char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '.' ||
              lower == '_' || lower == '-';
    out += ok ? lower : '-';
  }
  while (!out.empty() && (out[0] == '.' || out[0] == '-')) out.erase(0, 1);
  return out.empty() ? "volume" : out;
}

std::string join(const std::string& dir, const std::string& path) {
  if (is_host_absolute_path(path)) return path;
  std::string rest = path;
  if (rest.rfind("./", 0) == 0) rest = rest.substr(2);
  if (rest == "." || rest.empty()) return dir;
  return dir + "/" + rest;
}

class Mapper {
 public:
  Mapper(ComposeProject& project, const ComposeMapContext& context)
      : project_(project), context_(context) {}

  Result<StackFile> map() {
    StackFile stack;
    stack.name = project_.name;
    stack.file = project_.file;
    stack.dir = project_.dir;
    stack.where = project_.where;
    for (auto& service : project_.services) {
      STACKIE_TRY_ASSIGN(block, map_service(service));
      stack.blocks.push_back(std::move(block));
    }
    STACKIE_TRY(check_dependencies());
    add_consumes(stack);
    return stack;
  }

 private:
  void warn(const SourceLocation& where, const std::string& text) {
    project_.warnings.push_back(compose_warning(where, text));
  }

  Result<StackBlockDecl> map_service(const ComposeService& service) {
    StackBlockDecl block;
    block.name = service.name;
    block.where = service.where;
    std::optional<ImageRef> image;
    if (service.image) image = parse_image(service.image->text);
    const KnownImage* known = image ? find_known(image->repository) : nullptr;
    std::string catalog = known ? known->block : image ? "stackie." + image->repository : "";
    std::optional<std::vector<ServedPort>> catalog_ports;
    bool own = service.build_context || service.stackie_command.present;
    if (const std::string* why = image ? why_not_from_compose(image->repository) : nullptr;
        why != nullptr && !own)
      return error_at(service.image->where,
                      "service '" + service.name + "': image '" + service.image->text +
                          "' cannot be mapped: " + *why +
                          "; add to the service `x-stackie: {command: ...}` with the command "
                          "that runs your server on this host, or use " +
                          catalog + " from a stack file (stackie-block(5))");
    if (!own && !catalog.empty()) catalog_ports = context_.catalog_ports(catalog);
    if (catalog_ports) {
      STACKIE_TRY(map_catalog_service(service, *image, known, catalog, *catalog_ports, block));
    } else {
      STACKIE_TRY(map_own_service(service, block));
    }
    for (const auto& depend : service.depends_on) {
      block.depends_on.emplace_back(depend.service, depend.where);
      if (depend.condition != DependCondition::healthy)
        block.depend_conditions.emplace_back(depend.service, depend.condition);
    }
    STACKIE_TRY(map_lifecycle(service, block));
    block.profiles = service.profiles;  // compose's meaning is Stackie's (--profile)
    block.secrets = service.stackie_secrets;
    return block;
  }

  // One NAME=VALUE an image documents: onto the catalog block's var, or a warning saying why
  // it does not map.
  void map_catalog_env(const ComposeService& service, const KnownImage* known,
                       const std::string& catalog, const std::string& name, const YamlNode& value,
                       const SourceLocation& where, StackBlockDecl& block) {
    std::string var;
    std::string why;
    if (known) {
      for (const auto& [env, target] : known->env_to_var)
        if (env == name) var = target;
      for (const auto& [env, reason] : known->env_explained)
        if (env == name) why = reason;
    }
    if (!var.empty()) {
      block.vars.emplace_back(var, value);
      block.var_where.push_back(where);
    } else {
      warn(where, "environment '" + name + "' of '" + service.name + "' is not mapped onto " +
                      catalog + (why.empty() ? "" : ": " + why));
    }
  }

  Status map_catalog_service(const ComposeService& service, const ImageRef& image,
                             const KnownImage* known, const std::string& catalog,
                             const std::vector<ServedPort>& ports, StackBlockDecl& block) {
    block.catalog = make_scalar(catalog, service.image->where);
    if (!image.tag.empty() && image.tag != "latest")
      warn(service.image->where,
           "image tag '" + image.tag + "' is not a version constraint: " + catalog +
               " runs the newest " + image.repository + " installed on this host");
    // An image's documented variables from its env files first, then from `environment`,
    // which wins as in compose.
    STACKIE_TRY_ASSIGN(files, read_declared_env_files(service.env_files, project_.dir,
                                                      "service '" + service.name + "'"));
    for (const auto& file : files)
      for (const auto& entry : file.entries) {
        bool overridden = std::any_of(service.environment.begin(), service.environment.end(),
                                      [&](const auto& e) { return e.first == entry.name; });
        if (!overridden)
          map_catalog_env(service, known, catalog, entry.name, literal_scalar(entry), entry.where,
                          block);
      }
    for (size_t i = 0; i < service.environment.size(); ++i)
      map_catalog_env(service, known, catalog, service.environment[i].first,
                      service.environment[i].second, service.env_where[i], block);
    for (const auto& port : service.ports) {
      auto served = std::find_if(ports.begin(), ports.end(),
                                 [&](const ServedPort& p) { return p.port == port.container; });
      if (served == ports.end()) {
        warn(port.where, "port " + std::to_string(port.container) + " is not one " + catalog +
                             " serves; not mapped");
        continue;
      }
      note_host_ip(port);
      ServeDecl serve;
      serve.name = served->name;
      serve.host_port = port.host;
      serve.where = port.where;
      serve.port_where = port.where;
      block.serves.push_back(serve);
    }
    for (const auto& port : service.expose)
      if (std::none_of(ports.begin(), ports.end(),
                       [&](const ServedPort& p) { return p.port == port.container; }))
        warn(port.where,
             "expose " + std::to_string(port.container) + ": not a port " + catalog + " serves");
    served_ports_[service.name] = ports;
    if (service.command.present)
      warn(service.command.where, "'command' of '" + service.name + "' is not mapped: " + catalog +
                                      " runs its own server command");
    if (service.entrypoint.present)
      warn(service.entrypoint.where, "'entrypoint' of '" + service.name + "' is not mapped: " +
                                         catalog + " runs its own server command");
    if (service.health && !service.health->disabled)
      warn(service.health->where, "'healthcheck' of '" + service.name +
                                      "' is not mapped: " + catalog + " has its own health check");
    if (service.health && service.health->disabled) {
      HealthDecl none;
      none.where = service.health->where;
      block.health = none;
    }
    for (const auto& volume : service.volumes) {
      bool data = known && std::find(known->data_dirs.begin(), known->data_dirs.end(),
                                     volume.target) != known->data_dirs.end();
      if (!data || volume.kind == ComposeVolume::Kind::anonymous) {
        warn(volume.where, "volume at '" + volume.target + "' of '" + service.name +
                               "' is not mapped: " + catalog +
                               " keeps its data in its own volume ('data')");
        continue;
      }
      VolumeDecl decl;
      decl.name = "data";
      decl.where = volume.where;
      if (volume.kind == ComposeVolume::Kind::bind) {
        decl.host_path = make_scalar(join(project_.dir, volume.source), volume.where);
      } else {
        note_named_volume(volume, service.name);
      }
      block.volumes.push_back(decl);
    }
    if (service.working_dir)
      warn(service.working_dir->where, "'working_dir' of '" + service.name + "' is not mapped");
    return {};
  }

  static CommandDecl to_command(const ComposeCommand& command) {
    CommandDecl out;
    out.present = command.present;
    out.argv = command.argv;
    out.shell = command.shell;
    out.where = command.where;
    return out;
  }

  // Compose's rule: a list entrypoint takes the command as its arguments; a shell-form
  // entrypoint ignores the command.
  CommandDecl own_command(const ComposeService& service) {
    if (service.stackie_command.present) return to_command(service.stackie_command);
    if (!service.entrypoint.present) return to_command(service.command);
    CommandDecl out = to_command(service.entrypoint);
    if (!service.command.present) return out;
    if (service.entrypoint.shell) {
      warn(service.command.where, "'command' of '" + service.name +
                                      "' is ignored: its entrypoint is a shell command line");
      return out;
    }
    if (!service.command.shell) {
      for (const auto& arg : service.command.argv) out.argv.push_back(arg);
      return out;
    }
    // `command: a b c` after a list entrypoint: compose splits the line into words.
    const YamlNode& line = service.command.argv[2];
    size_t start = 0;
    while (true) {
      start = line.text.find_first_not_of(" \t", start);
      if (start == std::string::npos) break;
      size_t end = line.text.find_first_of(" \t", start);
      YamlNode word = line;
      word.text = line.text.substr(start, end == std::string::npos ? end : end - start);
      out.argv.push_back(word);
      if (end == std::string::npos) break;
      start = end;
    }
    return out;
  }

  Status map_own_service(const ComposeService& service, StackBlockDecl& block) {
    block.command = own_command(service);
    if (!block.command.present) {
      std::string what = service.image ? "image '" + service.image->text +
                                             "' is not in the Stackie catalog and the service "
                                             "has no command"
                                       : "the service has no command";
      return error_at(service.where,
                      "service '" + service.name + "': " + what +
                          " to run natively; add to it `x-stackie: {command: ...}` with the "
                          "command that runs it on this host");
    }
    if (service.image && !service.build_context)
      warn(service.image->where, "image '" + service.image->text + "' is not used: '" +
                                     service.name + "' runs its command on this host");
    if (service.stackie_path || service.build_context) {
      block.path = service.stackie_path ? service.stackie_path : service.build_context;
      if (service.working_dir)
        warn(service.working_dir->where, "'working_dir' of '" + service.name +
                                             "' is not mapped: the block runs in " +
                                             block.path->text);
    } else if (service.working_dir &&
               context_.is_directory(join(project_.dir, service.working_dir->text))) {
      block.path = service.working_dir;
    } else if (service.working_dir) {
      warn(service.working_dir->where,
           "'working_dir' " + service.working_dir->text + " of '" + service.name +
               "' is not a directory on this host: the block runs in the project directory");
    }
    if (service.stackie_network) block.network = service.stackie_network;
    block.environment = service.environment;
    block.env_files = service.env_files;
    std::set<int> seen;
    std::vector<ServedPort> served;
    auto add_port = [&](const ComposePort& port) {
      if (!seen.insert(port.container).second) return;
      ServeDecl serve;
      serve.name = port.name.empty() ? "port-" + std::to_string(port.container) : port.name;
      serve.port = port.container;
      serve.host_port = port.host;
      serve.where = port.where;
      serve.port_where = port.where;
      block.serves.push_back(serve);
      served.push_back({serve.name, serve.name, serve.port, serve.host_port});
    };
    for (const auto& port : service.ports) {
      note_host_ip(port);
      add_port(port);
    }
    for (const auto& port : service.expose) add_port(port);
    served_ports_[service.name] = served;
    if (service.health) {
      HealthDecl health;
      health.where = service.health->where;
      if (!service.health->disabled) {
        health.kind = HealthCheck::Kind::exec;
        health.exec = service.health->exec;
      }
      STACKIE_TRY(map_health_timing(*service.health, health));
      block.health = health;
    }
    std::string project_path = block.path ? join(project_.dir, block.path->text) : project_.dir;
    for (const auto& volume : service.volumes)
      STACKIE_TRY(map_own_volume(service, volume, project_path, block));
    return {};
  }

  Status map_health_timing(const ComposeHealth& compose, HealthDecl& health) {
    if (compose.interval) {
      STACKIE_TRY_ASSIGN(ms, read_duration_ms(*compose.interval, "healthcheck.interval"));
      health.interval_ms = ms;
    }
    if (compose.timeout) {
      STACKIE_TRY_ASSIGN(ms, read_duration_ms(*compose.timeout, "healthcheck.timeout"));
      health.timeout_ms = ms;
    }
    if (compose.start_period) {
      STACKIE_TRY_ASSIGN(ms, read_duration_ms(*compose.start_period, "healthcheck.start_period"));
      health.start_period_ms = ms;
    }
    if (compose.retries) {
      STACKIE_TRY_ASSIGN(retries, read_int(*compose.retries, "healthcheck.retries"));
      if (retries < 1) return error_at(compose.retries->where, "'retries' must be at least 1");
      health.retries = retries;
    }
    return {};
  }

  Status map_own_volume(const ComposeService& service, const ComposeVolume& volume,
                        const std::string& project_path, StackBlockDecl& block) {
    if (volume.kind == ComposeVolume::Kind::anonymous) {
      warn(volume.where,
           "anonymous volume '" + volume.target + "' of '" + service.name + "' is not mapped");
      return {};
    }
    VolumeDecl decl;
    decl.where = volume.where;
    decl.read_only = volume.read_only;
    if (volume.kind == ComposeVolume::Kind::named) {
      decl.name = path_name(volume.source);
      note_named_volume(volume, service.name);
      warn(volume.where, "volume '" + volume.source + "' of '" + service.name +
                             "' is a directory of the block's storage, not mounted at '" +
                             volume.target + "': the block finds it as ${paths." + decl.name + "}");
      block.volumes.push_back(decl);
      return {};
    }
    if (volume.source[0] == '~' || volume.source[0] == '$') {
      warn(volume.where, "bind '" + volume.source + "' of '" + service.name +
                             "' is not mapped: write it as a path relative to the compose "
                             "file or an absolute one");
      return {};
    }
    std::string host = join(project_.dir, volume.source);
    while (host.size() > 1 && host.back() == '/') host.pop_back();
    if (host == project_path && !volume.read_only) return {};  // the block's own directory
    size_t slash = volume.target.find_last_of('/');
    decl.name = path_name(volume.target.substr(slash == std::string::npos ? 0 : slash + 1));
    decl.host_path = make_scalar(host, volume.where);
    if (host != volume.target)
      warn(volume.where, "bind '" + volume.source + "' of '" + service.name +
                             "' is visible at its host path " + host + ", not at '" +
                             volume.target + "' (the block runs natively): ${paths." + decl.name +
                             "}");
    block.volumes.push_back(decl);
    return {};
  }

  void note_host_ip(const ComposePort& port) {
    if (port.host_ip.empty() || port.host_ip == "127.0.0.1" || port.host_ip == "localhost") return;
    warn(port.where, "host address '" + port.host_ip +
                         "' is not mapped: Stackie publishes ports on 127.0.0.1 only");
  }

  void note_named_volume(const ComposeVolume& volume, const std::string& service) {
    if (std::find(project_.volumes.begin(), project_.volumes.end(), volume.source) ==
        project_.volumes.end())
      warn(volume.where, "volume '" + volume.source + "' of '" + service +
                             "' is not declared under the top-level 'volumes'");
  }

  Status map_lifecycle(const ComposeService& service, StackBlockDecl& block) {
    if (service.restart) {
      std::string text = service.restart->text;
      if (text == "unless-stopped") text = "always";
      if (text.rfind("on-failure:", 0) == 0) {
        warn(service.restart->where, "the retry count of '" + service.restart->text +
                                         "' is not mapped: Stackie's restart policy backs off "
                                         "without a limit");
        text = "on-failure";
      }
      STACKIE_TRY_ASSIGN(restart, parse_restart(make_scalar(text, service.restart->where)));
      block.restart = restart;
    }
    if (service.stop_signal) {
      STACKIE_TRY_ASSIGN(signal, parse_signal(*service.stop_signal));
      block.stop_signal = signal;
    }
    if (service.stop_grace_period) {
      STACKIE_TRY_ASSIGN(ms, read_duration_ms(*service.stop_grace_period, "stop_grace_period"));
      block.stop_timeout_ms = ms;
    }
    return {};
  }

  Status check_dependencies() {
    for (const auto& service : project_.services)
      for (const auto& depend : service.depends_on)
        if (served_ports_.count(depend.service) == 0)
          return error_at(depend.where, "service '" + service.name + "' depends on '" +
                                            depend.service + "', which is not a service here");
    return {};
  }

  // Every text of a service that may name another service as a host.
  static std::vector<std::pair<std::string, SourceLocation>> texts_of(
      const ComposeService& service) {
    std::vector<std::pair<std::string, SourceLocation>> out;
    for (size_t i = 0; i < service.environment.size(); ++i)
      out.emplace_back(service.environment[i].second.text, service.env_where[i]);
    for (const auto* command : {&service.command, &service.entrypoint, &service.stackie_command})
      for (const auto& arg : command->argv) out.emplace_back(arg.text, arg.where);
    if (service.health)
      for (const auto& arg : service.health->exec) out.emplace_back(arg.text, arg.where);
    return out;
  }

  // A service consumes every port of each service it depends on or names as a host.
  void add_consumes(StackFile& stack) {
    for (size_t i = 0; i < project_.services.size(); ++i) {
      const ComposeService& service = project_.services[i];
      StackBlockDecl& block = stack.blocks[i];
      // A catalog block's values are its server's settings (POSTGRES_USER: app), never the
      // address of another service: it consumes only what it depends on.
      bool catalog = block.catalog.has_value();
      auto texts =
          catalog ? std::vector<std::pair<std::string, SourceLocation>>{} : texts_of(service);
      for (const auto& provider : project_.services) {
        if (provider.name == service.name) continue;
        const auto& ports = served_ports_[provider.name];
        if (ports.empty()) continue;
        std::optional<SourceLocation> where;
        for (const auto& depend : service.depends_on)
          if (depend.service == provider.name) where = depend.where;
        for (const auto& [text, at] : texts)
          if (!where && mentions_host(text, provider.name)) where = at;
        if (!where) continue;
        for (const auto& port : ports) {
          ConsumeDecl consume;
          consume.name = ports.size() == 1 ? provider.name : provider.name + "-" + port.name;
          consume.block = provider.name;
          consume.port_type = port.type;
          consume.where = *where;
          consume.block_where = *where;
          block.consumes.push_back(consume);
        }
      }
    }
  }

  ComposeProject& project_;
  const ComposeMapContext& context_;
  std::map<std::string, std::vector<ServedPort>> served_ports_;
};

}  // namespace

Result<StackFile> map_compose(ComposeProject& project, const ComposeMapContext& context) {
  return Mapper(project, context).map();
}

}  // namespace stackie
