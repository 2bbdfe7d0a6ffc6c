#include "stack/loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <map>
#include <optional>
#include <set>

#include "base/fs_path.h"
#include "base/safe_open.h"
#include "policy/resource_limits.h"
#include "stack/block_def.h"
#include "stack/catalog.h"
#include "stack/catalog_entry.h"
#include "stack/command_check.h"
#include "stack/compose_file.h"
#include "stack/env_file.h"
#include "stack/file_kind.h"
#include "stack/interpolate.h"
#include "stack/programs.h"
#include "stack/resolve.h"
#include "stack/secrets.h"
#include "stack/shared_mode.h"
#include "stack/stack_file.h"
#include "stack/users_places.h"
#include "stack/writable_dirs.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

constexpr const char* kSystemPath = "/usr/local/bin:/usr/bin:/bin";

bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// A stack block merged with its definition, before interpolation.
struct BlockSpec {
  const StackBlockDecl* decl = nullptr;
  std::optional<BlockDef> def;  // empty for a first-party block
  bool shipped_def = false;     // def is one of Stackie's own catalog (shipped_block_path())
  std::string sandbox_id;
  // `mode: shared`: the instance ("stackie.postgres@15") and its directory name; empty = own.
  std::string shared_instance;
  std::string shared_dir;
  NamedScalars vars;
  std::vector<ServeDecl> serves;
  NamedScalars environment;
  CommandDecl command;
  std::optional<HealthDecl> health;
  std::vector<std::string> env_files;  // absolute, the ones read
};

// The directory a block's relative paths start from: its own file's (a substack's blocks).
const std::string& block_dir(const StackBlockDecl& decl, const StackFile& stack) {
  return decl.dir.empty() ? stack.dir : decl.dir;
}

Status merge_vars(BlockSpec& spec) {
  const StackBlockDecl& decl = *spec.decl;
  if (!spec.def) {
    spec.vars = decl.vars;
    return {};
  }
  spec.vars = spec.def->vars;
  std::vector<std::string> known;
  for (const auto& [name, value] : spec.vars) known.push_back(name);
  for (size_t i = 0; i < decl.vars.size(); ++i) {
    const auto& [name, value] = decl.vars[i];
    // Names compare case-insensitively (`USER: app` sets `user`): the docs once wrote them in
    // upper case; lower case is preferred.
    auto found = std::find_if(spec.vars.begin(), spec.vars.end(), [&wanted = name](const auto& e) {
      return std::equal(
          e.first.begin(), e.first.end(), wanted.begin(), wanted.end(),
          [](unsigned char a, unsigned char b) { return std::tolower(a) == std::tolower(b); });
    });
    if (found == spec.vars.end()) {
      std::string declared;
      for (const auto& known_name : known) declared += (declared.empty() ? "" : ", ") + known_name;
      return error_at(decl.var_where[i],
                      "unknown var '" + name + "' for block '" + decl.name + "' (it declares: " +
                          (declared.empty() ? "none" : declared) + ")" + did_you_mean(name, known));
    }
    found->second = value;
  }
  return {};
}

Status merge_serves(BlockSpec& spec) {
  const StackBlockDecl& decl = *spec.decl;
  if (spec.def) spec.serves = spec.def->serves;
  for (const auto& override_port : decl.serves) {
    auto found = std::find_if(spec.serves.begin(), spec.serves.end(),
                              [&](const ServeDecl& s) { return s.name == override_port.name; });
    if (found == spec.serves.end()) {
      if (spec.def) {
        std::vector<std::string> known;
        for (const auto& s : spec.serves) known.push_back(s.name);
        return error_at(override_port.where, "block '" + decl.name + "' serves no port '" +
                                                 override_port.name + "'" +
                                                 did_you_mean(override_port.name, known));
      }
      if (override_port.port == 0)
        return error_at(override_port.where, "'serves." + override_port.name + "' needs a 'port'");
      spec.serves.push_back(override_port);
      continue;
    }
    if (override_port.port) {
      found->port = override_port.port;
      found->port_where = override_port.port_where;
    }
    if (override_port.host_port) found->host_port = override_port.host_port;
    if (!override_port.type.empty()) found->type = override_port.type;
  }
  for (auto& serve : spec.serves)
    if (serve.type.empty()) serve.type = serve.name;
  return {};
}

void set_entry(NamedScalars& environment, const std::string& name, const YamlNode& value) {
  auto found = std::find_if(environment.begin(), environment.end(),
                            [&](const auto& entry) { return entry.first == name; });
  if (found != environment.end())
    found->second = value;
  else
    environment.emplace_back(name, value);
}

// The definition's environment, then the env files in order, then the stack's `environment`:
// each later one wins (compose: `environment` over `env_file`).
Status merge_environment(BlockSpec& spec, const StackFile& stack) {
  spec.environment.clear();
  if (spec.def) spec.environment = spec.def->environment;
  STACKIE_TRY_ASSIGN(files,
                     read_declared_env_files(spec.decl->env_files, block_dir(*spec.decl, stack),
                                             "block '" + spec.decl->name + "'"));
  for (const auto& file : files) {
    for (const auto& entry : file.entries)
      set_entry(spec.environment, entry.name, literal_scalar(entry));
    spec.env_files.push_back(file.path);
  }
  for (const auto& [name, value] : spec.decl->environment) set_entry(spec.environment, name, value);
  return {};
}

Result<std::string> shared_storage_root(const LoadOptions& options);

// Builds one ResolvedBlock: paths, programs, interpolation and the sandbox policy.
class BlockBuilder {
 public:
  // `storage` is the stack's storage root; `shared_storage` the user's, where a shared
  // instance lives (stack/shared_mode.h).
  BlockBuilder(const LoadOptions& options, const StackFile& stack, const std::string& storage,
               const std::string& shared_storage, const BlockSpec& spec,
               std::vector<ConsumedPort> consumes, std::vector<std::string> depends_on,
               SecretStore& secrets, const std::vector<ResolvedBlock>& built,
               const std::vector<WritableDir>& writable,
               const std::vector<std::string>& stack_decisive)
      : options_(options),
        stack_(stack),
        storage_(spec.shared_instance.empty() ? storage : shared_storage),
        spec_(spec),
        decl_(*spec.decl),
        dir_(block_dir(*spec.decl, stack)),
        secrets_(secrets),
        built_(built),
        writable_(writable),
        stack_decisive_(stack_decisive) {
    block_.name = decl_.name;
    block_.sandbox_id = spec.sandbox_id;
    block_.first_party = !spec.def.has_value();
    block_.shared_instance = spec.shared_instance;
    block_.definition_file = spec.def ? spec.def->file : stack.file;
    block_.consumes = std::move(consumes);
    block_.depends_on = std::move(depends_on);
    block_.depend_conditions = spec.decl->depend_conditions;
    for (const auto& profile : spec.decl->profiles) block_.profiles.push_back(profile.text);
    block_.env_files = spec.env_files;
    for (const auto& serve : spec.serves)
      block_.serves.push_back({serve.name, serve.type, serve.port, serve.host_port});
  }

  Result<ResolvedBlock> build() {
    decide_isolation();
    STACKIE_TRY(allocate_host_ports());
    STACKIE_TRY(resolve_paths());
    STACKIE_TRY(find_programs());
    STACKIE_TRY_ASSIGN(command, expand_argv(spec_.command.argv, true));
    block_.command = std::move(command);
    STACKIE_TRY(decide_outbound());
    STACKIE_TRY(expand_environment());
    if (spec_.def) {
      STACKIE_TRY_ASSIGN(init, expand_init(spec_.def->init));
      block_.init = std::move(init);
    }
    STACKIE_TRY(expand_health());
    block_.restart = decl_.restart.value_or(options_.settings.default_restart);
    block_.stop_signal = decl_.stop_signal.value_or(spec_.def ? spec_.def->stop_signal : SIGTERM);
    long long stop_ms = 10000;
    if (spec_.def && spec_.def->stop_timeout_ms) stop_ms = *spec_.def->stop_timeout_ms;
    if (decl_.stop_timeout_ms) stop_ms = *decl_.stop_timeout_ms;
    block_.stop_timeout = Milliseconds(stop_ms);
    STACKIE_TRY(build_policy());
    STACKIE_TRY(check_programs());
    STACKIE_TRY(resolve_watch());
    STACKIE_TRY(list_shared_settings());
    std::sort(block_.secret_values.begin(), block_.secret_values.end());
    block_.secret_values.erase(
        std::unique(block_.secret_values.begin(), block_.secret_values.end()),
        block_.secret_values.end());
    return std::move(block_);
  }

  // What the loader warns about (a secret on a command line), "FILE:LINE:COL: warning: ...".
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

 private:
  bool shared() const { return !spec_.shared_instance.empty(); }

  // A persistent path SUB of the block: the stack's (volumes/<stack>/<block>/SUB), or the
  // shared instance's (volumes/@shared/<instance>/SUB), never a stack's directory.
  std::string volume_path(const std::string& owner, const std::string& sub) const {
    if (shared()) return volume_dir(storage_, kSharedStack, spec_.shared_dir + "/" + sub);
    return volume_dir(storage_, stack_.name, owner + "/" + sub);
  }

  // What another stack must ask for alike to share this instance (shared_mode.h): the
  // definition, the version, each var as interpolated (a secret var by its value: two stacks
  // with different passwords cannot share one server), the ports inside, the limits.
  Status list_shared_settings() {
    if (!shared()) return {};
    auto& settings = block_.shared_settings;
    settings.emplace_back("definition", block_.definition_file);
    settings.emplace_back("version", decl_.version ? decl_.version->text : "");
    for (const auto& [name, value] : spec_.vars) {
      STACKIE_TRY_ASSIGN(text, expand_text(value));
      settings.emplace_back("vars." + name, text);
    }
    for (const auto& port : block_.serves)
      settings.emplace_back("serves." + port.name, std::to_string(port.port) + "/" + port.type);
    settings.emplace_back("limits", describe_limits(block_.policy.limits));
    return {};
  }

  void decide_isolation() {
    auto platform = decl_.platform_sandbox.find(options_.os);
    bool platform_off = platform != decl_.platform_sandbox.end() && !platform->second;
    // --no-sandbox (and the no_sandbox setting) reach only first-party blocks: a managed or
    // third-party block is always sandboxed, unless its own stack entry opts out per platform.
    bool flag_off = block_.first_party && (options_.no_sandbox || options_.settings.no_sandbox);
    block_.sandboxed = !(flag_off || platform_off);
    block_.policy.network = NetworkMode::localhost;
    if (spec_.def && spec_.def->sandbox.network)
      block_.policy.network = *spec_.def->sandbox.network;
  }

  // `network: outbound` (first-party blocks): its own namespace as with localhost, plus the
  // daemon's egress proxy at a port inside that nothing else of the block uses.
  Status decide_outbound() {
    if (!decl_.network || decl_.network->text != "outbound") {
      if (!decl_.egress.empty())
        return error_at(decl_.egress.front().where,
                        "'egress' needs 'network: outbound' on block '" + block_.name + "'");
      return {};
    }
    if (spec_.def)
      return error_at(decl_.network->where, "network: outbound is for blocks of your own; '" +
                                                block_.name + "' comes from the catalog");
    if (on_host_network()) return {};  // unsandboxed: the host's network already
    // The egress proxy listens inside the block's own network namespace (Linux). Without one
    // the block shares the host's loopback, and its profile lets only declared ports cross:
    // say so rather than run it without the network it asked for.
    if (!has_network_namespaces())
      return error_at(decl_.network->where,
                      "network: outbound needs a network namespace of the block's own (Linux "
                      "only); on " +
                          options_.os + " use 'platforms: {" + options_.os +
                          ": {sandbox: false}}' for block '" + block_.name + "'");
    block_.outbound = true;
    for (const auto& pattern : decl_.egress) block_.egress_allow.push_back(pattern.text);
    std::set<int> used;
    for (const auto& port : block_.serves) used.insert(port.port);
    for (const auto& consume : block_.consumes) used.insert(consume.local_port);
    int port = 3128;  // the usual proxy port, or the next one the block does not use
    while (used.count(port) != 0) ++port;
    block_.egress_port = port;
    return {};
  }

  // A sandbox with no network namespace: the landlock backend (LoadOptions::ports_on_host) or
  // any OS but Linux (macOS's Seatbelt): the block's ports are the host's, but the sandbox
  // (Landlock's ruleset, the Seatbelt profile) keeps every other port closed.
  bool ports_on_host() const {
    return (options_.ports_on_host || !has_network_namespaces()) && block_.sandboxed &&
           block_.policy.network == NetworkMode::localhost;
  }
  bool has_network_namespaces() const { return options_.os == "linux"; }

  // The port `name` the block listens on: the declared one, or its host port when the block
  // binds that itself (ports_on_host).
  std::optional<int> served_port(const std::string& name) const {
    for (const auto& serve : block_.serves)
      if (serve.name == name) return serve.port;
    return std::nullopt;
  }

  // On the host's network: unsandboxed, or sandboxed with `network: host`.
  bool on_host_network() const {
    return !block_.sandboxed || block_.policy.network == NetworkMode::host;
  }

  // Host ports first (DESIGN.md §6): ${serves.X} of a block on the host's network and
  // ${consumes.X.PORT} of a consumer there are host ports, so they must be known before any
  // string is expanded. A block on the host's network binds its ports itself: exactly those.
  Status allocate_host_ports() {
    // `network: none` is no way in nor out (DESIGN.md §6): ports it would serve or consume
    // could never connect, so say so now rather than time out at run time.
    if (block_.sandboxed && block_.policy.network == NetworkMode::none) {
      std::string what;
      if (!block_.serves.empty())
        what = "nothing can reach its port '" + block_.serves[0].name + "'";
      else if (!block_.consumes.empty())
        what = "it cannot reach what it consumes as '" + block_.consumes[0].name + "'";
      if (!what.empty())
        return error_at(decl_.where, "block '" + block_.name +
                                         "' has network none (from its definition): " + what +
                                         "; use network localhost");
    }
    for (size_t i = 0; i < block_.serves.size(); ++i) {
      ServedPort& port = block_.serves[i];
      HostPortRequest request{stack_.name,
                              block_.name,
                              port.name,
                              port.host_port != 0 ? port.host_port : port.port,
                              stack_.strict_ports || on_host_network(),
                              stack_.dir};
      if (shared()) {
        // The instance's port, whichever stack asks: the daemon's allocator gives a running
        // instance the port it holds (the same block of the same stack).
        request.stack = kSharedStack;
        request.block = spec_.shared_instance;
        request.exact = on_host_network();
        request.project_dir.clear();
      }
      if (on_host_network() && port.host_port != 0 && port.host_port != port.port)
        return error_at(spec_.serves[i].port_where,
                        "'serves." + port.name + "' of '" + block_.name +
                            "' runs on the host's network: host_port must equal port");
      if (!options_.allocate_host_port) {
        port.host_port = request.wanted;  // no allocator (validate, tests): the wanted port
      } else {
        auto allocated = options_.allocate_host_port(request);
        if (!allocated.ok()) return error_at(spec_.serves[i].port_where, allocated.error().message);
        port.host_port = allocated->port;
        if (allocated->port != request.wanted)
          block_.moved_ports.push_back(
              {port.name, request.wanted, allocated->port, allocated->note});
      }
      if (ports_on_host()) port.port = port.host_port;
    }
    // A consumer on the host's network reaches a provider through its host port.
    if (on_host_network() || ports_on_host())
      for (auto& consume : block_.consumes)
        if (const ServedPort* port = provider_port(consume)) consume.local_port = port->host_port;
    return {};
  }

  const ServedPort* provider_port(const ConsumedPort& consume) const {
    for (const auto& block : built_)
      if (block.name == consume.provider)
        for (const auto& port : block.serves)
          if (port.name == consume.provider_port) return &port;
    return nullptr;
  }

  // ${paths.X}: a definition's volume and runtime paths, then the stack's volumes (which may
  // replace a definition's path of the same name, e.g. to keep postgres data elsewhere).
  Status resolve_paths() {
    std::string owner = block_short_name(decl_.name);
    std::string tmp = tmp_dir(storage_, spec_.sandbox_id);
    if (spec_.def)
      for (const auto& path : spec_.def->paths) {
        std::string host = path.kind == PathDecl::Kind::volume ? volume_path(owner, path.sub)
                                                               : join_path(tmp, path.sub);
        set_path(path.name, host);
      }
    for (const auto& volume : decl_.volumes) {
      if (!volume.project_volume.empty()) {
        set_path(volume.name,
                 volume_dir(storage_, stack_.name, ".shared/" + volume.project_volume));
        continue;
      }
      if (volume.host_path && volume.relative_host &&
          !is_host_absolute_path(volume.host_path->text)) {
        set_path(volume.name, normalize_path(dir_ + "/" + volume.host_path->text));
        if (volume.read_only) read_only_paths_.insert(volume.name);
        continue;
      }
      if (!volume.host_path) {
        set_path(volume.name, volume_dir(storage_, stack_.name, owner + "/" + volume.name));
        continue;
      }
      const std::string& host = volume.host_path->text;
      if (!is_host_absolute_path(host))
        return error_at(
            volume.host_path->where,
            "volume '" + volume.name + "' must be an absolute host path, got '" + host + "'");
      set_path(volume.name, normalize_path(host));
      if (volume.read_only) read_only_paths_.insert(volume.name);
    }
    STACKIE_TRY(resolve_inside_paths(owner));
    if (decl_.path) {
      const std::string& text = decl_.path->text;
      project_dir_ = normalize_path(is_host_absolute_path(text) ? text : dir_ + "/" + text);
      if (!is_directory(project_dir_))
        return error_at(decl_.path->where,
                        "path '" + text + "' is not a directory (" + project_dir_ + ")");
    }
    return {};
  }

  // `paths: {data: /var/lib/postgresql/data}`: the block's path (its definition's, a volume's,
  // else a new managed volume of that name) shown at that path inside the sandbox, for a
  // program that expects its data there. Where the sandbox cannot show a directory elsewhere
  // (no sandbox; the landlock backend) the path stays the host's, with a warning.
  Status resolve_inside_paths(const std::string& owner) {
    for (const auto& [key, value] : decl_.inside_paths) {
      std::string inside = normalize_path(value.text);
      if (inside != value.text && inside + "/" != value.text)
        return error_at(value.where,
                        "'paths." + key.text +
                            "' must be a plain absolute path (no '.', '..' or '//'), got '" +
                            value.text + "'");
      STACKIE_TRY(check_inside_path(key.text, inside, value.where));
      const std::string& name_text = key.text;  // (clang 14: no structured binding in a lambda)
      bool known = std::any_of(paths_.begin(), paths_.end(),
                               [&](const auto& entry) { return entry.first == name_text; });
      if (!known) set_path(key.text, volume_dir(storage_, stack_.name, owner + "/" + key.text));
      for (const auto& [name, other] : inside_)
        if (other == inside)
          return error_at(value.where, "'paths." + key.text + "' and 'paths." + name +
                                           "' are both shown at " + inside);
      if (!block_.sandboxed || ports_on_host()) {
        warnings_.push_back(
            format_location(value.where) + ": warning: block '" + decl_.name + "' " +
            (block_.sandboxed ? "runs in the landlock sandbox, which" : "runs unsandboxed, so it") +
            " cannot see a directory at another path: ${paths." + key.text +
            "} is its host path, not " + inside);
        continue;
      }
      inside_.emplace_back(key.text, inside);
    }
    return {};
  }

  // Not where the sandbox itself puts something (its system view, /proc, /dev, /tmp), nor the
  // root: a path there would hide what the block needs, or could not be made.
  static Status check_inside_path(const std::string& name, const std::string& inside,
                                  const SourceLocation& where) {
    std::vector<std::string> reserved = {"/proc", "/dev", "/tmp", "/sys"};
    for (const auto& path : system_view_paths()) reserved.push_back(path);
    if (inside == "/") return error_at(where, "'paths." + name + "' cannot be the sandbox's root");
    for (const auto& path : reserved) {
      const char* how = path_below(inside, path)   ? "would hide"
                        : path_below(path, inside) ? "is inside"
                                                   : nullptr;
      if (how)
        return error_at(where, "'paths." + name + "' (" + inside + ") " + how + " " + path +
                                   ", which the sandbox provides itself");
    }
    return {};
  }

  // The path NAME as the block sees it: where `paths:` shows it, else its host path.
  std::string seen_path(const std::string& name, const std::string& host) const {
    for (const auto& [mapped, inside] : inside_)
      if (mapped == name) return inside;
    return host;
  }

  SourceLocation inside_where(const std::string& name) const {
    for (const auto& [key, value] : decl_.inside_paths)
      if (key.text == name) return value.where;
    return decl_.where;
  }

  void set_path(const std::string& name, const std::string& host) {
    for (auto& entry : paths_)
      if (entry.first == name) {
        entry.second = host;
        return;
      }
    paths_.emplace_back(name, host);
  }

  Status find_programs() {
    if (decl_.version && !spec_.def)
      return error_at(decl_.version->where,
                      "'version' is for catalog blocks; '" + decl_.name + "' is first-party");
    std::vector<std::string> path_dirs;
    if (auto found = options_.env.find("PATH"); found != options_.env.end())
      path_dirs = split_search_path(found->second);
    // A PATH directory another block can write (a project's node_modules/.bin, its .venv/bin)
    // is not searched for this block: a program planted there would run in this block's
    // sandbox, with its volumes, or on the host for a block without one.
    std::erase_if(path_dirs, [&](const std::string& dir) {
      return std::any_of(writable_.begin(), writable_.end(), [&](const WritableDir& written) {
        return written.writer != decl_.name &&
               path_below(written.path, normalize_path(dir)).has_value();
      });
    });
    if (spec_.def)
      for (const auto& program : spec_.def->programs) {
        ProgramHost host{path_dirs, options_.os, options_.program_root};
        if (decl_.version) {
          if (!has_versioned_programs(*spec_.def))
            return error_at(decl_.version->where,
                            decl_.name +
                                " cannot choose a version: its programs are not found "
                                "in versioned directories");
          const std::string& wanted = decl_.version->text;
          FoundProgram found = find_block_program(program, host, wanted);
          if (found.path.empty()) {
            std::string installed;
            for (const auto& version : installed_block_versions(program, host))
              installed += (installed.empty() ? "" : ", ") + version;
            std::string hint = version_install_hint(program, wanted, options_.os);
            return error_at(
                decl_.version->where,
                decl_.name + ": version " + wanted + " of '" + program.names.front() +
                    "' not found (installed: " + (installed.empty() ? "none" : installed) + ")" +
                    (hint.empty() ? "" : "; install it with: " + hint));
          }
          add_program(program.name, found);
          for (const auto& name : program.names) program_alias_[name] = program.name;
          continue;
        }
        FoundProgram found = find_block_program(program, host);
        if (found.path.empty()) {
          std::string hint = install_hint(program.packages, options_.os);
          return error_at(decl_.where, decl_.name + ": program '" + program.names.front() +
                                           "' not found" +
                                           (hint.empty() ? " in PATH or the block's search "
                                                           "directories"
                                                         : "; install it with: " + hint));
        }
        STACKIE_TRY(check_searched_program(program, found, path_dirs));
        add_program(program.name, found);
        for (const auto& name : program.names) program_alias_[name] = program.name;
      }
    for (const auto& tool : decl_.tools) {
      ProgramHost host{path_dirs, options_.os, options_.program_root};
      FoundProgram found = find_block_program(tool, host);
      if (found.path.empty()) {
        std::string hint = install_hint(tool.packages, options_.os);
        return error_at(tool.where, decl_.name + ": tool '" + tool.names.front() + "' not found" +
                                        (hint.empty() ? " in PATH or its search directories"
                                                      : "; install it with: " + hint));
      }
      add_program(tool.name, found);
      for (const auto& name : tool.names) program_alias_[name] = tool.name;
    }
    if (!spec_.def && !spec_.command.argv.empty()) {
      // A first-party command: argv[0] is a program on PATH, or a path (relative ones against
      // the block's directory).
      const YamlNode& first = spec_.command.argv.front();
      if (has_reference(first.text)) return {};
      std::string name = first.text;
      if (name.find('/') == std::string::npos) {
        FoundProgram found = find_program({{name}, {}, path_dirs, "", {}});
        if (found.path.empty())
          return error_at(first.where, decl_.name + ": program '" + name + "' not found in PATH");
        add_program(name, found);
        program_alias_[name] = name;
      } else {
        std::string base = project_dir_.empty() ? dir_ : project_dir_;
        std::string absolute =
            normalize_path(is_host_absolute_path(name) ? name : base + "/" + name);
        std::string dir = absolute.substr(0, absolute.rfind('/'));
        std::string program_dir = dir.empty() ? "/" : dir;
        add_program(name, {absolute, program_dir, program_dir});
        program_alias_[name] = name;
      }
    }
    return {};
  }

  // A definition's `search:` globs name directories, which are then shown to the block: from
  // someone else's catalog, `search: [/home/*/*]` would show a project (its .env) or a key's
  // directory. What its globs found is given as its grants are; what PATH found, the user chose.
  Status check_searched_program(const ProgramDecl& program, const FoundProgram& found,
                                const std::vector<std::string>& path_dirs) const {
    if (!spec_.def || spec_.shipped_def) return {};
    const std::string where = normalize_path(found.dir);
    // Tests search a fake tree (program_root) that stands for "/".
    auto as_on_host = [&](const std::string& dir) {
      if (options_.program_root.empty()) return normalize_path(dir);
      auto below = path_below(normalize_path(options_.program_root), normalize_path(dir));
      return below ? normalize_path("/" + *below) : normalize_path(dir);
    };
    // PATH and the usual bin directories (stack/programs.h) are not the definition's choice.
    std::vector<std::string> chosen = path_dirs;
    for (const auto& dir : usual_program_dirs(options_.os))
      chosen.push_back(options_.program_root.empty() ? dir : options_.program_root + dir);
    const bool on_path = std::any_of(chosen.begin(), chosen.end(), [&](const auto& dir) {
      return is_host_absolute_path(dir) && normalize_path(dir) == where;
    });
    if (on_path) return {};
    for (const auto& dir : {found.dir, found.real_dir})
      if (!dir.empty())
        STACKIE_TRY(check_definition_grant(as_on_host(dir), dir, program.where,
                                           "programs." + program.name + " found in", false));
    return {};
  }

  void add_program(const std::string& name, const FoundProgram& found) {
    block_.programs.emplace_back(name, found.path);
    // A program found where a block can write (a project's .venv/bin on PATH) may be a link
    // that block planted: what it names could be any of the user's, so nothing of it is shown
    // beyond the directory it was found in (a venv's python still finds /usr/bin/python3 in the
    // system view; a target outside the sandbox's view is reported by check_programs).
    const std::string real = link_below(writable_, found.path) ? found.dir : found.real_dir;
    for (const auto& dir : {found.dir, real})
      if (!dir.empty() &&
          std::find(program_dirs_.begin(), program_dirs_.end(), dir) == program_dirs_.end())
        program_dirs_.push_back(dir);
  }

  std::string program_path(const std::string& name) const {
    auto alias = program_alias_.find(name);
    if (alias == program_alias_.end()) return "";
    for (const auto& [key, path] : block_.programs)
      if (key == alias->second) return path;
    return "";
  }

  // A definition from outside Stackie's own catalog reads only the secrets its block's entry
  // lists (`secrets: [NAME]`): a secret is looked up in the environment `up` ran in, where
  // ${secrets.SSH_AUTH_SOCK} would be the user's agent as a grant and ${secrets.AWS_...} a key
  // in the block's environment. The stack's own text (vars it gives, its environment) reads any.
  Status check_secret_passed(const Reference& ref) const {
    if (!spec_.def || spec_.shipped_def || ref.where.file != spec_.def->file) return {};
    const std::string& name = ref.parts.front();
    for (const auto& listed : decl_.secrets)
      if (listed.text == name) return {};
    // A compose service says it in its extension (compose has no such field).
    const std::string& declared_in = decl_.where.file;
    const auto& compose_names = compose_file_names();
    const bool compose =
        std::find(compose_names.begin(), compose_names.end(),
                  declared_in.substr(declared_in.rfind('/') + 1)) != compose_names.end();
    const std::string list =
        compose ? "the service's `x-stackie: {secrets: [...]}`" : "the block's 'secrets' list";
    return error_at(ref.where, "block '" + decl_.name + "': its definition reads secret '" + name +
                                   "', which the stack does not give it; if it may have it, add " +
                                   name + " to " + list + " (" + format_location(decl_.where) +
                                   ")");
  }

  Result<Expanded> resolve_reference(const Reference& ref) {
    const std::string& name = ref.parts.front();
    std::string context = " in block '" + decl_.name + "'";
    auto unknown = [&](const std::vector<std::string>& known) {
      std::vector<std::string> refs;
      for (const auto& k : known) refs.push_back("${" + ref.kind + "." + k + "}");
      return error_at(ref.where, "unknown reference '" + ref.text + "'" + context +
                                     did_you_mean(ref.text, refs));
    };
    if (ref.kind == "vars") {
      std::vector<std::string> known;
      for (const auto& [var, value] : spec_.vars) {
        known.push_back(var);
        if (var != name) continue;
        if (auto done = expanded_vars_.find(var); done != expanded_vars_.end()) return done->second;
        if (!expanding_vars_.insert(var).second)
          return error_at(ref.where, "var '" + var + "' refers to itself" + context);
        STACKIE_TRY_ASSIGN(expanded, expand(value));
        expanding_vars_.erase(var);
        expanded_vars_[var] = expanded;
        return expanded;
      }
      return unknown(known);
    }
    if (ref.kind == "serves") {
      std::vector<std::string> known;
      for (const auto& serve : spec_.serves) {
        if (serve.name == name) return Expanded{std::to_string(*served_port(name)), false};
        known.push_back(serve.name);
      }
      return unknown(known);
    }
    if (ref.kind == "paths") {
      std::vector<std::string> known;
      for (const auto& [path, host] : paths_) {
        if (path == name) return Expanded{seen_path(path, host), false};
        known.push_back(path);
      }
      return unknown(known);
    }
    if (ref.kind == "secrets") {
      STACKIE_TRY(check_secret_passed(ref));
      STACKIE_TRY_ASSIGN(value, secrets_.lookup(name));
      if (!value)
        return error_at(ref.where, "missing secret '" + name + "'" + context + " (looked in " +
                                       secrets_.sources_description() + ")");
      if (!value->empty()) block_.secret_values.push_back(*value);
      return Expanded{*value, true};
    }
    // consumes
    if (ref.parts.size() == 1) {  // ${consumes.ALL}
      std::string all;
      for (const auto& consume : block_.consumes)
        all += (all.empty() ? "" : " ") + consume.name +
               "=127.0.0.1:" + std::to_string(consume.local_port);
      return Expanded{all, false};
    }
    std::vector<std::string> known;
    for (const auto& consume : block_.consumes) {
      if (consume.name == name)
        return Expanded{ref.parts[1] == "HOST" ? "127.0.0.1" : std::to_string(consume.local_port),
                        false};
      known.push_back(consume.name);
    }
    std::vector<std::string> refs;
    for (const auto& k : known) refs.push_back("${consumes." + k + "." + ref.parts[1] + "}");
    return error_at(
        ref.where, "unknown reference '" + ref.text + "'" + context + did_you_mean(ref.text, refs));
  }

  Result<Expanded> expand(const YamlNode& node) {
    return interpolate(node, [this](const Reference& ref) { return resolve_reference(ref); });
  }

  Result<std::string> expand_text(const YamlNode& node) {
    STACKIE_TRY_ASSIGN(expanded, expand(node));
    return std::move(expanded.text);
  }

  // Interpolates an argv; a bare argv[0] that names one of the block's programs becomes the
  // absolute path discovery found, so the block runs exactly the binary its policy exposes.
  Result<std::vector<std::string>> expand_argv(const std::vector<YamlNode>& argv,
                                               bool substitute_program) {
    std::vector<std::string> out;
    for (const auto& arg : argv) {
      STACKIE_TRY_ASSIGN(expanded, expand(arg));
      if (expanded.secret)
        warnings_.push_back(format_location(arg.where) + ": warning: block '" + decl_.name +
                            "' puts a secret on a command line, where every user's `ps` shows "
                            "it; pass it through 'environment' instead");
      out.push_back(std::move(expanded.text));
    }
    if (substitute_program && !out.empty())
      if (std::string path = program_path(out.front()); !path.empty()) out.front() = path;
    return out;
  }

  Status expand_environment() {
    bool has_path = false;
    for (const auto& [name, value] : spec_.environment) {
      STACKIE_TRY_ASSIGN(expanded, expand(value));
      if (expanded.secret) block_.secret_names.push_back(name);
      has_path = has_path || name == "PATH";
      block_.policy.environment.emplace_back(name, std::move(expanded.text));
      block_.environment_sources.push_back(shown_location(value.where));
    }
    if (block_.outbound) {
      // Both spellings: curl reads the lower case ones, most others either.
      std::string proxy = "http://127.0.0.1:" + std::to_string(block_.egress_port);
      for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
        set_default_env(name, proxy, "network: outbound");
      for (const char* name : {"NO_PROXY", "no_proxy"})
        set_default_env(name, "localhost,127.0.0.1", "network: outbound");
    }
    if (!has_path) {
      // The block's programs first, then the system directories every sandbox shows.
      std::string path;
      std::string system = std::string(":") + kSystemPath + ":";
      for (const auto& dir : program_dirs_)
        if (system.find(":" + dir + ":") == std::string::npos) path += dir + ":";
      block_.policy.environment.emplace_back("PATH", path + kSystemPath);
      block_.environment_sources.push_back("default");
    }
    return {};
  }

  void set_default_env(const std::string& name, const std::string& value, const char* source) {
    for (const auto& [key, existing] : block_.policy.environment)
      if (key == name) return;  // the stack's own setting wins
    block_.policy.environment.emplace_back(name, value);
    block_.environment_sources.push_back(source);
  }

  // `watch:` is for a block of the stack's own, in its project directory (`path:`).
  Status resolve_watch() {
    if (!decl_.watch) return {};
    if (spec_.def || project_dir_.empty())
      return error_at(
          decl_.watch->where,
          "'watch' needs a block of your own with a 'path' (block '" + block_.name + "')");
    WatchSpec& watch = block_.watch;
    watch.root = project_dir_;
    for (const auto& glob : decl_.watch->paths) watch.paths.push_back(glob.text);
    if (watch.paths.empty()) watch.paths.push_back(".");
    for (const auto& glob : decl_.watch->ignore) watch.ignore.push_back(glob.text);
    watch.action = decl_.watch->action;
    watch.signal = decl_.watch->signal;
    watch.debounce = Milliseconds(decl_.watch->debounce_ms);
    return {};
  }

  // "app.env:3:1" below the stack file's directory, the absolute path elsewhere.
  std::string shown_location(const SourceLocation& where) const {
    SourceLocation shown = where;
    if (auto below = path_below(stack_.dir, where.file); below && !below->empty())
      shown.file = *below;
    return format_location(shown);
  }

  Result<std::vector<InitStep>> expand_init(const std::vector<InitDecl>& steps) {
    std::vector<InitStep> out;
    for (const auto& decl : steps) {
      InitStep step;
      if (decl.if_not_exists) {
        STACKIE_TRY_ASSIGN(guard, expand_text(*decl.if_not_exists));
        STACKIE_TRY(require_absolute(guard, decl.if_not_exists->where, "if.not_exists"));
        step.if_not_exists = std::move(guard);
        STACKIE_TRY_ASSIGN(then, expand_init(decl.then));
        step.then = std::move(then);
      } else if (decl.append_path) {
        STACKIE_TRY_ASSIGN(path, expand_text(*decl.append_path));
        STACKIE_TRY(require_absolute(path, decl.append_path->where, "append_file.path"));
        STACKIE_TRY_ASSIGN(text, expand_text(*decl.append_text));
        step.append_path = std::move(path);
        step.append_text = std::move(text);
      } else {
        STACKIE_TRY_ASSIGN(argv, expand_argv(decl.run, true));
        step.run = std::move(argv);
      }
      out.push_back(std::move(step));
    }
    return out;
  }

  Status require_absolute(const std::string& path, const SourceLocation& where,
                          std::string_view what) {
    if (!path.empty() && path[0] == '/') return {};
    return error_at(where,
                    "'" + std::string(what) + "' must be an absolute path, got '" + path + "'");
  }

  Status expand_health() {
    std::optional<HealthDecl> decl = decl_.health ? decl_.health : spec_.health;
    if (!decl) return {};
    HealthCheck& health = block_.health;
    health.kind = decl->kind;
    if (decl->kind == HealthCheck::Kind::none) return {};  // `health: none`
    health.interval = Milliseconds(decl->interval_ms);
    health.timeout = Milliseconds(decl->timeout_ms);
    health.retries = decl->retries;
    health.start_period = Milliseconds(decl->start_period_ms);
    if (decl->kind == HealthCheck::Kind::exec) {
      STACKIE_TRY_ASSIGN(argv, expand_argv(decl->exec, true));
      health.argv = std::move(argv);
      return {};
    }
    std::vector<std::string> known;
    for (const auto& serve : spec_.serves) {
      known.push_back(serve.name);
      if (serve.name == decl->port_name) health.port = *served_port(serve.name);
    }
    if (!health.port)
      return error_at(decl->port_where, "health check port '" + decl->port_name +
                                            "' is not served by block '" + decl_.name + "'" +
                                            did_you_mean(decl->port_name, known));
    health.port_name = decl->port_name;
    if (decl->kind == HealthCheck::Kind::http) {
      STACKIE_TRY_ASSIGN(path, expand_text(decl->http_path));
      if (path.empty() || path[0] != '/')
        return error_at(decl->http_path.where, "'health.http.path' must start with '/'");
      health.http_path = std::move(path);
      health.http_status = decl->http_status;
    }
    return {};
  }

  // A definition's extra grants. A definition may come from a catalog someone else wrote, so it
  // reaches into stackie's storage only for what is the block's own (its volumes, runtime and
  // temp dirs; written only where the block may write them): `${paths.data}/../..` would be
  // every other block's volumes and logs, and a directory that holds the storage shows them all.
  // A ".." is refused anywhere, so that the path granted is the path as read. (The daemon's home
  // and socket are refused for every bind, check_bound_paths.)
  Result<std::vector<std::string>> expand_sandbox_paths(const std::vector<YamlNode>& nodes,
                                                        std::string_view what, bool written) {
    std::vector<std::string> out;
    for (const auto& node : nodes) {
      STACKIE_TRY_ASSIGN(path, expand_text(node));
      STACKIE_TRY(require_absolute(path, node.where, what));
      if (has_parent_step(path))
        return error_at(node.where, std::string(what) + " '" + path +
                                        "': a '..' is not allowed here; name the path itself");
      std::string normal = normalize_path(path);
      STACKIE_TRY(check_definition_grant(normal, path, node.where, what, written));
      out.push_back(std::move(normal));
    }
    return out;
  }

  // What a definition may be given (its sandbox grants, the directories its `programs:` search
  // found a program in): not /proc's magic links, nothing of stackie's storage but the block's
  // own, none of the user's places (stack/users_places.h). `normal` is the path normalised,
  // `shown` as written, for the message.
  Status check_definition_grant(const std::string& normal, const std::string& shown,
                                const SourceLocation& where, std::string_view what,
                                bool written) const {
    // A path that does not exist yet is compared through the links above it (/var/run/x).
    const std::string resolved = resolved_through_existing(normal);
    // /proc/self/fd/N would be a descriptor of the launcher's (its storage root): no path
    // resolves through one, so the checks below would not see where it leads.
    for (const std::string& spelled : {normal, resolved})
      for (const char* magic : {"/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
        if (path_below(magic, spelled))
          return error_at(where, std::string(what) + " '" + shown + "': " + magic +
                                     " is not given to a definition");
    // Whether the path is in `dir` or holds it, as written or as the file system resolves both.
    struct Relation {
      bool inside, holds;
    };
    auto relation = [&](const std::string& dir) {
      const std::string dir_resolved = path_for_comparison(dir);
      return Relation{path_below(dir, normal) || path_below(dir_resolved, resolved),
                      path_below(normal, dir) || path_below(resolved, dir_resolved)};
    };
    bool own = false;
    for (const auto& root : storage_roots()) {
      const auto [inside, holds] = relation(root);
      if (inside && is_own_storage(normal, written)) {
        own = true;
        continue;
      }
      if (inside || holds)
        return error_at(where, std::string(what) + " '" + shown + "' " +
                                   (inside ? "is in" : "holds") + " stackie's storage (" + root +
                                   "): a definition is given only the block's own volumes and "
                                   "runtime paths there");
    }
    if (own) return {};
    // A volume the stack gives read-only is not the definition's to write below.
    if (written)
      for (const auto& [name, host] : paths_) {
        if (read_only_paths_.count(name) == 0 || host.empty()) continue;
        const std::string volume = normalize_path(host);
        if (relation(volume).inside)
          return error_at(where, std::string(what) + " '" + shown + "' is in volume '" + name +
                                     "' (" + volume + "), which the stack gives read-only");
      }
    for (const auto& place : users_places(options_.env, stack_.dir)) {
      const auto [inside, holds] = relation(place.dir);
      if (inside || holds)
        return error_at(where, std::string(what) + " '" + shown + "' " +
                                   (inside ? "is in" : "holds") + " " + place.what + " (" +
                                   place.dir +
                                   "): a definition is given the system's paths; the stack "
                                   "gives the block yours (volumes)");
    }
    return {};
  }

  // The stack's storage root and the user's, where shared instances live (one when they are the
  // same or the latter is unknown).
  std::vector<std::string> storage_roots() const {
    std::vector<std::string> out;
    if (!storage_.empty()) out.push_back(normalize_path(storage_));
    if (auto shared = shared_storage_root(options_); shared.ok() && !shared->empty()) {
      std::string root = normalize_path(*shared);
      if (std::find(out.begin(), out.end(), root) == out.end()) out.push_back(root);
    }
    return out;
  }

  static bool has_parent_step(const std::string& path) {
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      if (path.compare(start, end - start, "..") == 0) return true;
      start = end + 1;
    }
    return false;
  }

  // At or below the block's temp directory, or one of its volumes or runtime paths in the
  // storage (paths_), for `written` one the block may write.
  bool is_own_storage(const std::string& path, bool written) const {
    if (path_below(normalize_path(block_.policy.host_tmp_dir), path)) return true;
    const std::vector<std::string> roots = storage_roots();
    return std::any_of(paths_.begin(), paths_.end(), [&](const auto& named) {
      const std::string host = normalize_path(named.second);
      const bool managed = std::any_of(roots.begin(), roots.end(), [&](const std::string& root) {
        return path_below(root, host).has_value();
      });
      if (!managed || (written && read_only_paths_.count(named.first) != 0)) return false;
      return path_below(host, path).has_value();
    });
  }

  Status build_policy() {
    SandboxPolicy& policy = block_.policy;
    policy.name = spec_.sandbox_id;
    policy.limits = merge_limits(spec_.def ? &spec_.def->limits : nullptr, decl_.limits);
    if (spec_.def && spec_.def->sandbox.identity) policy.identity = *spec_.def->sandbox.identity;
    policy.host_tmp_dir = tmp_dir(storage_, spec_.sandbox_id);
    policy.storage_root = storage_;
    policy.working_dir = project_dir_.empty() ? "/" : project_dir_;
    std::set<std::string> targets;
    auto add = [&](std::vector<BindMount>& list, const std::string& path) {
      if (targets.insert(path).second) list.push_back({path, ""});
    };
    // Read-write first, so a path both written and read is mounted writable once. A path that
    // `paths:` shows elsewhere is bound there, after everything else (below).
    auto shown_elsewhere = [&](const std::string& name) { return seen_path(name, "").size() > 0; };
    for (const auto& [name, host] : paths_)
      if (read_only_paths_.count(name) == 0 && !shown_elsewhere(name)) add(policy.read_write, host);
    for (const auto& [name, host] : paths_)
      if (read_only_paths_.count(name) != 0 && !shown_elsewhere(name)) add(policy.read_only, host);
    // A provider's block name resolves to the loopback inside, where its port is forwarded:
    // `db:5432` as in compose (the lockbox writes the sandbox's /etc/hosts).
    for (const auto& consume : block_.consumes)
      if (std::find(policy.host_names.begin(), policy.host_names.end(), consume.provider) ==
          policy.host_names.end())
        policy.host_names.push_back(consume.provider);
    if (!project_dir_.empty()) add(policy.read_write, project_dir_);
    if (spec_.def) {
      STACKIE_TRY_ASSIGN(
          rw, expand_sandbox_paths(spec_.def->sandbox.read_write, "sandbox.read_write", true));
      for (const auto& path : rw) add(policy.read_write, path);
      STACKIE_TRY_ASSIGN(
          ro, expand_sandbox_paths(spec_.def->sandbox.read_only, "sandbox.read_only", false));
      for (const auto& path : ro) add(policy.read_only, path);
    }
    for (const auto& dir : program_dirs_) add(policy.read_only, dir);
    for (const auto& [name, inside] : inside_) {
      if (!targets.insert(inside).second)
        return error_at(inside_where(name), "'paths." + name + "' (" + inside +
                                                ") is already shown in the sandbox: the block's " +
                                                "own directory, a program's or another path's");
      std::string host;
      for (const auto& [path, host_path] : paths_)
        if (path == name) host = host_path;
      auto& list = read_only_paths_.count(name) ? policy.read_only : policy.read_write;
      list.push_back({host, inside});
    }
    if (ports_on_host()) {
      for (const auto& serve : block_.serves) policy.tcp_bind.push_back(serve.port);
      for (const auto& consume : block_.consumes) policy.tcp_connect.push_back(consume.local_port);
    }
    STACKIE_TRY(protect_decisive_paths(targets));
    return check_bound_paths();
  }

  // What decides how the next `up` runs, bound read-only on top wherever the block can write it
  // (issue 14: a block that rewrites its stack file to `sandbox: false`, plants a secret or a
  // git hook): below its project (`path`), a host volume (compose's `.:/app`), a definition's
  // grant, at the place each is shown. Each directory on the way to one is bound onto itself,
  // so it is a mount point the block cannot rename: `mv api api.x && mkdir api` would have left
  // it a fresh api/stackie-stack.yml. One given to write as a whole is refused.
  Status protect_decisive_paths(std::set<std::string>& targets) {
    if (!block_.sandboxed) return {};  // unsandboxed, it writes everything the user can anyway
    SandboxPolicy& policy = block_.policy;
    const std::vector<std::string> decisive = decisive_candidates();
    const std::vector<BindMount> written = policy.read_write;  // what follows adds to it
    for (const auto& bind : written) {
      const std::string root = normalize_path(bind.source);
      const std::string root_resolved = path_for_comparison(root);
      for (const auto& decisive_path : decisive) {
        // Below the bind as written, or as the file system resolves both (a volume named
        // through a link to the project): then protected under the bind's own spelling.
        auto below = path_below(root, decisive_path);
        if (!below) below = path_below(root_resolved, path_for_comparison(decisive_path));
        if (!below || !is_file_or_directory_itself(decisive_path)) continue;
        const std::string path = below->empty() ? root : join_path(root, *below);
        if (below->empty())
          return error_at(decl_.where, "block '" + block_.name + "' would be given " + path +
                                           " to write, which decides how the next up runs: "
                                           "give it read-only (:ro), or a directory below it");
        auto shown = [&](const std::string& host) {
          std::string at = join_path(bind.target(), *path_below(root, host));
          return BindMount{host, at == host ? "" : at};
        };
        for (const auto& dir : directories_on_the_way(root, path))
          if (BindMount mount = shown(dir); targets.insert(mount.target()).second)
            policy.read_write.push_back(std::move(mount));
        if (BindMount mount = shown(path); targets.insert(mount.target()).second)
          policy.read_only.push_back(std::move(mount));
      }
    }
    // What would decide the next up if it were made (a .env, the secrets file, .git): the
    // block may not make it where the sandbox can say so (Seatbelt); elsewhere the daemon
    // refuses one made, at the next up (supervisor/stack_neighbours.h).
    std::vector<std::string> makeable = decisive;
    for (const auto& file : secrets_.files()) makeable.push_back(normalize_path(file));
    for (const auto& bind : written)
      for (const auto& path : makeable) {
        auto below = path_below(normalize_path(bind.source), path);
        if (!below || below->empty() || !is_missing(path)) continue;
        if (std::find(policy.no_create.begin(), policy.no_create.end(), path) ==
            policy.no_create.end())
          policy.no_create.push_back(path);
      }
    return {};
  }

  // A sandboxed block is given nothing of the daemon's own. Written, the storage root or
  // STACKIE_HOME would hand it every other block's volumes, logs and /tmp and the daemon's state
  // (state.json, config.toml); shown at all, STACKIE_HOME holds the API token and the socket's
  // directory the daemon's socket, from where a block could `up` a stack without a sandbox. A
  // project directory that holds them (a stack file in the home directory, a storage_root inside
  // the project) is the usual way in, a link planted in the project (a volume's directory made a
  // link to the home) another: the paths are compared as given and as the file system resolves
  // them (path_for_comparison).
  Status check_bound_paths() const {
    if (!block_.sandboxed) return {};
    struct Guarded {
      std::string root, what, why;
      bool read_too;         // shown read-only is refused as well, and anything inside it
      std::string resolved;  // root as the file system takes it (path_for_comparison)
    };
    std::vector<Guarded> guarded;
    if (!storage_.empty())
      guarded.push_back({normalize_path(storage_), "its storage root",
                         "every block's volumes, logs and /tmp", false, ""});
    if (auto home = stackie_home(options_.env); home.ok())
      guarded.push_back({normalize_path(*home), "stackie's home (STACKIE_HOME)",
                         "the daemon's state and its API token", true, ""});
    std::vector<std::string> sockets;
    if (!options_.daemon_socket.empty()) sockets.push_back(options_.daemon_socket);
    if (auto socket = socket_path(options_.env, options_.settings); socket.ok())
      sockets.push_back(*socket);
    for (const auto& socket : sockets)
      if (is_host_absolute_path(socket))
        guarded.push_back({normalize_path(socket + "/.."), "the daemon's socket directory",
                           "a way to drive the daemon", true, ""});
    for (auto& root : guarded) root.resolved = path_for_comparison(root.root);
    // The storage may lie in STACKIE_HOME (its default): what is in it is checked where it is
    // given (volumes are the block's own; a definition's grants, expand_sandbox_paths).
    const std::vector<std::string> storage = storage_roots();
    auto in_storage = [&](const std::string& source, const std::string& resolved) {
      return std::any_of(storage.begin(), storage.end(), [&](const std::string& root) {
        return path_below(root, source) || path_below(path_for_comparison(root), resolved);
      });
    };
    for (const bool written : {true, false})
      for (const auto& bind : written ? block_.policy.read_write : block_.policy.read_only) {
        const std::string source = normalize_path(bind.source);
        const std::string resolved = path_for_comparison(bind.source);
        for (const auto& root : guarded) {
          // Inside the home or the socket's directory: the token, state.json, the socket.
          auto strictly = [](const std::string& dir, const std::string& path) {
            auto below = path_below(dir, path);
            return below && !below->empty();
          };
          if (!root.read_too || in_storage(source, resolved) ||
              (!strictly(root.root, source) && !strictly(root.resolved, resolved)))
            continue;
          return error_at(decl_.where, "block '" + block_.name + "' would be given " + bind.source +
                                           (written ? " to write" : " to read") + ", which is in " +
                                           root.what + " " + root.root + " (" + root.why +
                                           "): give it a directory outside it");
        }
        for (const auto& root : guarded) {
          if ((!written && !root.read_too) ||
              (!path_below(source, root.root) && !path_below(resolved, root.resolved)))
            continue;
          const bool project = bind.source == project_dir_ && decl_.path.has_value();
          return error_at(project ? decl_.path->where : decl_.where,
                          "block '" + block_.name + "' would be given " + bind.source +
                              (written ? " to write" : " to read") + ", which holds " + root.what +
                              " " + root.root + " (" + root.why + "): " +
                              (project ? "keep the project in a directory of its own"
                                       : "give it a directory that does not") +
                              ", or move the storage (storage_root, STACKIE_HOME)");
        }
      }
    return {};
  }

  // Each first-party command and each exec health check names a program that exists, is
  // executable and is inside the sandbox's view (catalog commands are found by `programs:`).
  Status check_programs() {
    ProgramCheck check;
    check.view = block_.sandboxed ? &block_.policy : nullptr;
    check.base_dir = block_.policy.working_dir.empty() ? "/" : block_.policy.working_dir;
    for (const auto& [name, value] : block_.policy.environment)
      if (name == "PATH") check.path = split_search_path(value);
    auto verify = [&](const std::string& program, const SourceLocation& where) -> Status {
      check.program = program;
      auto found = check_program(check);
      if (!found.ok())
        return error_at(where, "block '" + block_.name + "': " + found.error().message);
      return {};
    };
    if (!spec_.def && !spec_.command.argv.empty()) {
      SourceLocation where;
      std::string program;
      if (spec_.command.shell) {
        const YamlNode& line = spec_.command.argv[2];
        size_t offset = 0;
        program = shell_program_word(line.text, &offset);
        where = line.at_offset(offset);
      } else if (!has_reference(spec_.command.argv.front().text)) {
        program = spec_.command.argv.front().text;
        where = spec_.command.argv.front().where;
      }
      if (spec_.command.shell || !program.empty()) {
        // A shell line whose program cannot be told: the line itself names what ran.
        block_.command_program = program.empty() ? spec_.command.argv[2].text : program;
        block_.command_where = short_location(where.file.empty() ? spec_.command.where : where);
      }
      if (!program.empty()) {
        // A list's argv[0] was found on the client's PATH or made absolute (find_programs).
        std::string checked = spec_.command.shell ? program : block_.command.front();
        STACKIE_TRY(verify(checked, where));
      }
    }
    if (block_.health.kind == HealthCheck::Kind::exec && !block_.health.argv.empty()) {
      std::optional<HealthDecl> decl = decl_.health ? decl_.health : spec_.health;
      if (decl && !decl->exec.empty() && !has_reference(decl->exec.front().text))
        STACKIE_TRY(verify(block_.health.argv.front(), decl->exec.front().where));
    }
    return {};
  }

  // "stackie-stack.yml:12:7": the file's name, as a user reads it next to its directory.
  static std::string short_location(const SourceLocation& where) {
    std::string file = where.file.substr(where.file.rfind('/') + 1);
    return file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
  }

  // The stack file, its secrets files, the block's env files, the directories of block
  // definitions (`sources:` and the catalog's: a block that rewrote one would choose its own
  // sandbox at the next up), and
  // .env, .dev.vars and .git of the stack's and the block's directories, normalised. Those that
  // exist as a file or directory where the block can write are protected (a symlink cannot be
  // mounted over; the loader refuses one where a block can write, writable_dirs.h).
  std::vector<std::string> decisive_candidates() const {
    std::vector<std::string> candidates = {stack_.file};
    for (const auto& file : stack_.substack_files) candidates.push_back(file);
    // Every directory definitions are looked for in, not only the one that held this block's (a
    // file added to an earlier one would take the name's place), and every block's env files,
    // whatever the profiles (another block's decides how that one runs).
    for (const auto& path : stack_decisive_) candidates.push_back(path);
    for (const auto& file : secrets_.existing_files()) candidates.push_back(file);
    for (const auto& file : spec_.env_files) candidates.push_back(file);
    for (const auto& dir : {stack_.dir, project_dir_})
      if (!dir.empty())
        for (const char* name : {".env", ".dev.vars", ".git"})
          candidates.push_back(join_path(dir, name));
    std::vector<std::string> out;
    for (const auto& candidate : candidates) {
      std::string path = normalize_path(candidate);
      if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
    }
    return out;
  }

  // The directories strictly between `root` and `path` (a path below it), outermost first.
  static std::vector<std::string> directories_on_the_way(const std::string& root,
                                                         const std::string& path) {
    std::vector<std::string> out;
    auto below = path_below(root, path);
    if (!below) return out;
    for (size_t slash = below->find('/'); slash != std::string::npos;
         slash = below->find('/', slash + 1))
      out.push_back(join_path(root, below->substr(0, slash)));
    return out;
  }

  const LoadOptions& options_;
  const StackFile& stack_;
  const std::string storage_;  // the stack's storage root, or the user's for a shared instance
  const BlockSpec& spec_;
  const StackBlockDecl& decl_;
  const std::string& dir_;  // where the block's relative paths start (block_dir)
  SecretStore& secrets_;
  const std::vector<ResolvedBlock>& built_;   // the blocks before this one (its providers)
  const std::vector<WritableDir>& writable_;  // the stack's (writable_dirs.h)
  // Catalog directories and every block's env files (decisive_candidates).
  const std::vector<std::string>& stack_decisive_;
  ResolvedBlock block_;
  std::vector<std::pair<std::string, std::string>> paths_;   // name -> host path
  std::set<std::string> read_only_paths_;                    // volumes bound read-only
  std::vector<std::pair<std::string, std::string>> inside_;  // `paths:` name -> inside path
  std::string project_dir_;
  std::vector<std::string> program_dirs_;
  std::map<std::string, std::string> program_alias_;  // file name -> programs key
  std::vector<std::string> warnings_;
  std::map<std::string, Expanded> expanded_vars_;
  std::set<std::string> expanding_vars_;
};

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

Result<std::string> resolve_storage_root(const StackFile& stack, const LoadOptions& options) {
  if (stack.storage_root) {
    const std::string& text = stack.storage_root->text;
    if (!text.empty() && !is_host_absolute_path(text) && check_name(*stack.storage_root, "").ok()) {
      // A name: config.toml's [storage_roots] says where it is on this machine.
      std::vector<std::string> names;
      for (const auto& [name, dir] : options.settings.storage_roots) {
        if (name == text) return normalize_path(dir);
        names.push_back(name);
      }
      return error_at(
          stack.storage_root->where,
          "storage root '" + text + "' is not named in config.toml (add [storage_roots] " + text +
              " = \"/absolute/dir\"; it names " + (names.empty() ? "none" : join_names(names)) +
              ")" + did_you_mean(text, names));
    }
    if (!is_host_absolute_path(text))
      return error_at(stack.storage_root->where,
                      "'storage_root' must be an absolute path or a name, got '" + text + "'");
    return normalize_path(text);
  }
  if (!options.settings.storage_root.empty()) return normalize_path(options.settings.storage_root);
  STACKIE_TRY_ASSIGN(home, stackie_home(options.env));
  return storage_root(home, options.settings);
}

// Where shared instances live: the user's storage root (LoadOptions::shared_storage_root, else
// config.toml's storage_root, else STACKIE_HOME/storage), whatever the stack's own is.
Result<std::string> shared_storage_root(const LoadOptions& options) {
  if (!options.shared_storage_root.empty()) return normalize_path(options.shared_storage_root);
  if (!options.settings.storage_root.empty()) return normalize_path(options.settings.storage_root);
  STACKIE_TRY_ASSIGN(home, stackie_home(options.env));
  return storage_root(home, options.settings);
}

Result<BlockSpec> make_spec(const StackFile& stack, const StackBlockDecl& decl,
                            const std::vector<std::string>& block_path,
                            const std::vector<std::string>& shipped) {
  BlockSpec spec;
  spec.decl = &decl;
  spec.sandbox_id = sandbox_id(stack.name, decl.name);
  bool own = decl.path.has_value() || decl.command.present;
  if (decl.catalog) {
    // `catalog: stackie.postgres`: an instance of that definition under this block's name.
    std::string file = find_block_file(decl.catalog->text, block_path);
    if (file.empty())
      return error_at(decl.catalog->where,
                      "unknown catalog block '" + decl.catalog->text + "'" +
                          did_you_mean(decl.catalog->text, catalog_names(block_path)));
    if (own)
      return error_at(decl.where, "block '" + decl.name +
                                      "' has a 'catalog' block and a 'path' or 'command' of its "
                                      "own; it is one or the other");
    STACKIE_TRY_ASSIGN(def, load_block_def(file, decl.catalog->text));
    spec.def = std::move(def);
  }
  std::string file = decl.path || decl.catalog ? "" : find_block_file(decl.name, block_path);
  if (!file.empty()) {
    STACKIE_TRY_ASSIGN(def, load_catalog_def(decl.name, block_path));
    spec.def = std::move(def);
  } else if (!own && !spec.def) {
    return error_at(decl.where, "unknown block '" + decl.name +
                                    "': not in the block catalog and no 'command' of its own" +
                                    did_you_mean(decl.name, catalog_names(block_path)));
  }
  if (!spec.def && !decl.command.present)
    return error_at(decl.where, "block '" + decl.name + "' has a 'path' but no 'command'");
  if (!spec.def && !decl.secrets.empty())
    return error_at(decl.secrets.front().where,
                    "'secrets' lists what a block's definition may read; block '" + decl.name +
                        "' has none (its own ${secrets.NAME} are read as written)");
  if (spec.def) {
    const std::string dir = directory_of(spec.def->file);
    spec.shipped_def = std::find(shipped.begin(), shipped.end(), dir) != shipped.end();
  }
  STACKIE_TRY(merge_vars(spec));
  STACKIE_TRY(merge_serves(spec));
  if (decl.shared()) {
    if (!spec.def)
      return error_at(decl.mode->where,
                      "mode shared is for catalog blocks; '" + decl.name +
                          "' is a block of your own (path, command): each stack runs its own");
    if (spec.serves.empty())
      return error_at(decl.mode->where, "block '" + decl.name +
                                            "' serves no port, so no stack could reach a shared "
                                            "instance of it; use mode own");
    // One instance of a name serves every stack of the user: a project's own definition of
    // that name (its `sources:`) would run as the user's shared postgres, with its data.
    for (const auto& [dir, where] : stack.sources)
      if (path_below(dir, spec.def->file))
        return error_at(decl.mode->where,
                        "mode shared is for the catalog's blocks; '" + decl.name +
                            "' is defined by the project (" + spec.def->file +
                            ", from sources), and each stack runs its own: use mode own");
    std::string version = decl.version ? decl.version->text : "";
    spec.shared_instance = shared_instance_name(spec.def->name, version);
    spec.shared_dir = shared_instance_dir(spec.def->name, version);
    spec.sandbox_id = shared_sandbox_id(spec.def->name, version);
  }
  spec.command = decl.command.present ? decl.command : spec.def->command;
  if (spec.def) spec.health = spec.def->health;
  return spec;
}

// Two blocks of one stack named "redis" and "stackie.redis" would share one sandbox id, and with
// it one /tmp, log directory and cgroup, and one set of volumes: a catalog block could read and
// write the user's own block's files. Refused, at the second of the two.
Status check_short_names(const StackFile& stack) {
  for (size_t i = 0; i < stack.blocks.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const StackBlockDecl& block = stack.blocks[i];
      const StackBlockDecl& earlier = stack.blocks[j];
      if (block_short_name(block.name) != block_short_name(earlier.name)) continue;
      const std::string first_at = earlier.where.file == block.where.file
                                       ? "line " + std::to_string(earlier.where.line)
                                       : format_location(earlier.where);
      return error_at(block.where, "block '" + block.name + "' and block '" + earlier.name + "' (" +
                                       first_at +
                                       ") would share one sandbox, its volumes and its logs "
                                       "(both are '" +
                                       block_short_name(block.name) + "' there): rename one");
    }
  return {};
}

// Which blocks of the file this load builds (LoadOptions::blocks, profiles, running_blocks),
// closed over what they depend on: one flag per block of `stack.blocks`.
Result<std::vector<bool>> select_blocks(const StackFile& stack, const ResolvedGraph& graph,
                                        const LoadOptions& options, bool& default_selection) {
  size_t count = stack.blocks.size();
  std::vector<std::string> names, profiles;
  for (const auto& decl : stack.blocks) {
    names.push_back(decl.name);
    for (const auto& profile : decl.profiles)
      if (std::find(profiles.begin(), profiles.end(), profile.text) == profiles.end())
        profiles.push_back(profile.text);
  }
  auto index_of = [&](const std::string& name) -> size_t {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  for (const auto& profile : options.profiles)
    if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end())
      return Error{-EINVAL, stack.file + ": no block of stack '" + stack.name +
                                "' has the profile '" + profile + "' (" +
                                (profiles.empty() ? "it uses none"
                                                  : "its profiles: " + join_names(profiles)) +
                                ")" + did_you_mean(profile, profiles)};
  std::vector<bool> wanted(count, false);
  if (options.blocks.empty()) {
    for (size_t i = 0; i < count; ++i) {
      const auto& own = stack.blocks[i].profiles;
      wanted[i] = own.empty() || std::any_of(own.begin(), own.end(), [&](const YamlNode& p) {
                    return std::find(options.profiles.begin(), options.profiles.end(), p.text) !=
                           options.profiles.end();
                  });
    }
  } else {
    default_selection = false;
    for (const auto& name : options.blocks) {
      size_t at = index_of(name);
      if (at == count)
        return Error{-EINVAL, stack.file + ": stack '" + stack.name + "' has no block '" + name +
                                  "' (its blocks: " + join_names(names) + ")" +
                                  did_you_mean(name, names)};
      wanted[at] = true;
    }
  }
  if (options.running_blocks)
    for (const auto& name : options.running_blocks(stack.name)) {
      size_t at = index_of(name);
      if (at == count || wanted[at]) continue;  // gone from the file: it stops
      wanted[at] = true;
      default_selection = false;
    }
  // What a wanted block depends on or consumes is wanted too, whatever its profiles.
  std::vector<size_t> pending;
  for (size_t i = 0; i < count; ++i)
    if (wanted[i]) pending.push_back(i);
  while (!pending.empty()) {
    size_t block = pending.back();
    pending.pop_back();
    for (const auto& dependency : graph.depends_on[block]) {
      size_t at = index_of(dependency);
      if (at == count || wanted[at]) continue;
      wanted[at] = true;
      pending.push_back(at);
    }
  }
  if (std::none_of(wanted.begin(), wanted.end(), [](bool w) { return w; }))
    return Error{-EINVAL, stack.file + ": no block of stack '" + stack.name +
                              "' to start: each has profiles (" + join_names(profiles) +
                              ") and none is active; use --profile NAME or name the blocks"};
  return wanted;
}

}  // namespace

Result<Settings> load_user_settings(const Environment& env) {
  STACKIE_TRY_ASSIGN(home, stackie_home(env));
  return load_settings(config_path(home));
}

Result<ResolvedStack> load_stack(const LoadOptions& options) {
  STACKIE_TRY_ASSIGN(found, find_stack_file(options.file, options.cwd));
  std::string file = normalize_path(found);
  auto absolute_dirs = [&](const std::vector<std::string>& dirs) {
    std::vector<std::string> out;
    for (const auto& dir : dirs)
      out.push_back(normalize_path(is_host_absolute_path(dir) ? dir : options.cwd + "/" + dir));
    return out;
  };
  std::vector<std::string> block_path = absolute_dirs(
      options.block_path.empty() ? default_block_path(options.env) : options.block_path);
  const std::vector<std::string> shipped =
      absolute_dirs(options.block_path.empty() ? shipped_block_path() : options.shipped_block_path);
  std::vector<std::string> compose_warnings;
  STACKIE_TRY_ASSIGN(stack, load_any_stack_file(file, options.env, block_path, compose_warnings));
  // `sources:` (the stack's and its substacks'): the project's own block definitions, searched
  // before the catalog, so a project can carry a definition of its own or its own version of one.
  std::vector<std::string> sources;
  for (const auto& [dir, where] : stack.sources) {
    if (!is_directory(dir))
      return error_at(where, "'sources' directory " + dir + " does not exist");
    if (std::find(sources.begin(), sources.end(), dir) == sources.end()) sources.push_back(dir);
  }
  block_path.insert(block_path.begin(), sources.begin(), sources.end());
  if (!options.project_name.empty()) {
    // -p NAME (compose's habit): a second checkout of a project runs as a stack of its own.
    YamlNode name;
    name.kind = YamlNode::Kind::scalar;
    name.text = options.project_name;
    name.where.file = "--project-name";
    STACKIE_TRY(check_name(name, "project name"));
    stack.name = options.project_name;
  }
  STACKIE_TRY_ASSIGN(storage, resolve_storage_root(stack, options));
  std::string shared_storage;
  if (std::any_of(stack.blocks.begin(), stack.blocks.end(),
                  [](const StackBlockDecl& decl) { return decl.shared(); })) {
    STACKIE_TRY_ASSIGN(root, shared_storage_root(options));
    shared_storage = root;
  }

  STACKIE_TRY(check_short_names(stack));
  std::vector<BlockSpec> specs;
  std::vector<GraphBlock> graph;
  for (const auto& decl : stack.blocks) {
    STACKIE_TRY_ASSIGN(spec, make_spec(stack, decl, block_path, shipped));
    GraphBlock node;
    node.name = decl.name;
    node.where = decl.where;
    for (const auto& serve : spec.serves) {
      node.serves.push_back({serve.name, serve.type, serve.port, serve.host_port});
      node.serve_where.push_back(serve.port_where);
    }
    node.consumes = decl.consumes;
    node.depends_on = decl.depends_on;
    graph.push_back(std::move(node));
    specs.push_back(std::move(spec));
  }
  STACKIE_TRY_ASSIGN(resolved, resolve_graph(graph));
  bool default_selection = true;
  STACKIE_TRY_ASSIGN(wanted, select_blocks(stack, resolved, options, default_selection));

  SecretStore secrets(options.env, file);
  ResolvedStack out;
  out.warnings = std::move(compose_warnings);
  out.name = stack.name;
  out.file = file;
  out.storage_root = storage;
  out.default_selection = default_selection;
  for (size_t i = 0; i < stack.blocks.size(); ++i) {
    if (wanted[i]) continue;
    std::vector<std::string> profiles;
    for (const auto& profile : stack.blocks[i].profiles) profiles.push_back(profile.text);
    out.skipped.emplace_back(stack.blocks[i].name, std::move(profiles));
  }
  std::vector<const StackBlockDecl*> decls;  // of out.blocks, one by one
  const std::vector<WritableDir> writable = declared_writable_dirs(stack);
  std::vector<DecisivePath> decisive = {{file, {file, 0, 0}}};
  for (const auto& substack : stack.substack_files)
    decisive.push_back({substack, {substack, 0, 0}});
  for (const auto& secrets_file : secrets.existing_files())
    decisive.push_back({secrets_file, {secrets_file, 0, 0}});
  for (const auto& [dir, where] : stack.sources) decisive.push_back({dir, where});
  for (const auto& dir : block_path)
    if (is_directory(dir) && std::none_of(stack.sources.begin(), stack.sources.end(),
                                          [&](const auto& source) { return source.first == dir; }))
      decisive.push_back({dir, {file, 0, 0}});
  std::vector<std::string> stack_decisive = block_path;
  // What the next load would read if it were there: a catalog directory, secrets and env files.
  std::vector<std::string> absent;
  for (const auto& dir : block_path)
    if (is_missing(dir)) absent.push_back(dir);
  for (const auto& secrets_file : secrets.files())
    if (is_missing(secrets_file)) absent.push_back(secrets_file);
  // A substack named by its directory is the first of stack_file_names() there: one of the
  // names before it, made, would be taken instead (also when it was named as a file: then
  // refused needlessly, which is the safe side).
  for (const auto& substack : stack.substack_files) {
    const std::string dir = directory_of(substack);
    for (const auto& name : stack_file_names()) {
      const std::string earlier = join_path(dir, name);
      if (earlier == substack) break;
      if (is_missing(earlier)) absent.push_back(earlier);
    }
  }
  for (const auto& decl : stack.blocks)
    for (const auto& env_file : decl.env_files) {
      const std::string& text = env_file.path.text;
      std::string path =
          normalize_path(is_absolute_path(text) ? text : block_dir(decl, stack) + "/" + text);
      stack_decisive.push_back(path);
      if (!is_missing(path))
        decisive.push_back({path, env_file.path.where});
      else
        absent.push_back(path);
    }
  for (size_t index : resolved.order) {
    if (!wanted[index]) continue;
    STACKIE_TRY(merge_environment(specs[index], stack));
    BlockBuilder builder(options, stack, storage, shared_storage, specs[index],
                         resolved.consumes[index], resolved.depends_on[index], secrets, out.blocks,
                         writable, stack_decisive);
    STACKIE_TRY_ASSIGN(block, builder.build());
    out.blocks.push_back(std::move(block));
    decls.push_back(&stack.blocks[index]);
    for (auto& warning : builder.take_warnings()) out.warnings.push_back(std::move(warning));
  }
  STACKIE_TRY_ASSIGN(roots, confine_writable_dirs(out.blocks, decls, writable, decisive));
  out.writable_dirs = std::move(roots);
  for (const auto& path : absent) {
    // As written, or with the links above it resolved (a project reached through a link).
    const std::string through_links = resolved_through_existing(path);
    for (const auto& dir : out.writable_dirs)
      if (path_below(dir.path, path) || path_below(dir.path, through_links)) {
        out.absent_decisive.push_back({path, dir});
        break;
      }
  }
  out.decisive_paths.push_back(stack.dir);
  for (const auto& path : decisive) {
    out.decisive_files.push_back(path.path);
    if (!path_below(stack.dir, path.path)) out.decisive_paths.push_back(path.path);
  }
  for (const auto& warning : secrets.warnings()) out.warnings.push_back(warning);
  for (const char* name : {"PATH", "HOME"})
    if (options.env.count(name)) out.env_referenced.push_back(name);
  for (const auto& name : secrets.names_found_in_env()) out.env_referenced.push_back(name);
  return out;
}

}  // namespace stackie
