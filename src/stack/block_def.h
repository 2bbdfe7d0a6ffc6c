// A block definition file (DESIGN.md §4; stackie-block(5)) as parsed, before interpolation.
// Strings that may hold `${...}` stay YamlNodes so errors inside them keep their position.
// The pieces shared with the stack file (serves, health, command, signals) are parsed here too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"
#include "stack/stack_model.h"
#include "stack/yaml_node.h"

namespace stackie {

using NamedScalars = std::vector<std::pair<std::string, YamlNode>>;

struct ServeDecl {
  std::string name;
  std::string type;   // empty in a stack override = keep the definition's
  int port = 0;       // 0 in a stack override = keep the definition's
  int host_port = 0;  // 0 = same as port
  SourceLocation where;
  SourceLocation port_where;
};

struct HealthDecl {
  HealthCheck::Kind kind = HealthCheck::Kind::none;
  std::string port_name;  // tcp / http
  SourceLocation port_where;
  YamlNode http_path;  // http (scalar; "/" when absent)
  int http_status = 200;
  std::vector<YamlNode> exec;  // exec argv
  long long interval_ms = 1000;
  long long timeout_ms = 1000;
  int retries = 3;
  // Long enough for common dev servers (measured: python3 -m http.server 0.3-0.5 s, node's
  // http 0.4-0.7 s, a flask dev server 2.0-2.2 s, on a loaded 2-core VM): failures in it do not
  // count, and a block that passes earlier is healthy at once.
  long long start_period_ms = 10000;
  SourceLocation where;
};

struct InitDecl {
  std::optional<YamlNode> if_not_exists;  // a guarded group
  std::vector<InitDecl> then;
  std::vector<YamlNode> run;            // argv
  std::optional<YamlNode> append_path;  // append_file
  std::optional<YamlNode> append_text;
  SourceLocation where;
};

// `paths: NAME: {volume: SUB}` (persistent, storage/volumes/<stack>/<block>/SUB) or
// `{runtime: SUB}` (scratch, storage/tmp/<sandbox-id>/SUB). Both are read-write binds.
struct PathDecl {
  enum class Kind { volume, runtime };
  std::string name;
  Kind kind = Kind::volume;
  std::string sub;
  SourceLocation where;
};

// How to find one program on this host.
struct ProgramDecl {
  std::string name;                             // the key; what argv[0] may name
  std::vector<std::string> names;               // file names to look for (default: the key)
  std::vector<std::string> search;              // extra globs, newest version first
  std::map<std::string, std::string> packages;  // apt / brew / winget -> package
  // The same for one version: '*' stands for it ("postgresql-*" -> postgresql-15).
  std::map<std::string, std::string> version_packages;
  SourceLocation where;
};

struct SandboxDecl {
  std::vector<YamlNode> read_only;  // extra host paths (absolute, may interpolate)
  std::vector<YamlNode> read_write;
  std::optional<NetworkMode> network;
  std::optional<Identity> identity;
};

// `limits: {memory: 512MiB, pids: 1024, cpu: 1.5, shm: 64MiB}`: each field optional (the
// definition's, then the defaults of policy/limits.h fill the rest); "unlimited" is 0.
struct LimitsDecl {
  std::optional<uint64_t> memory_bytes;
  std::optional<int> pids;
  std::optional<int> cpu_millis;
  std::optional<uint64_t> shm_bytes;
  SourceLocation where;
};

struct CommandDecl {
  bool present = false;
  std::vector<YamlNode> argv;  // a string command is ["/bin/sh", "-c", STRING]
  bool shell = false;          // written as one string (argv[2] is the line)
  SourceLocation where;
};

struct BlockDef {
  std::string name;
  std::string file;
  SourceLocation where;
  // `alias: stackie.mariadb`: this name is another name of that definition (stackie.mysql);
  // an alias file holds nothing else (catalog_entry.h follows it).
  std::string alias;
  std::string description;
  NamedScalars vars;
  std::vector<ServeDecl> serves;
  std::vector<PathDecl> paths;
  NamedScalars environment;
  std::vector<InitDecl> init;
  CommandDecl command;
  std::optional<HealthDecl> health;
  int stop_signal = 15;
  std::optional<long long> stop_timeout_ms;
  SandboxDecl sandbox;
  std::vector<ProgramDecl> programs;
  LimitsDecl limits;
};

// Block names (and stack names) become directory names and sandbox ids: [a-z0-9._-], not
// starting with '.' or '-'.
Status check_name(const YamlNode& key, std::string_view what);

// Parses a definition file; its single top-level key must equal `expected_name` when given.
Result<BlockDef> load_block_def(const std::string& path, std::string_view expected_name);
Result<BlockDef> parse_block_def(const YamlNode& root, const std::string& path,
                                 std::string_view expected_name);

// Shared with the stack file.
// `require_port`: a definition must give each port; a stack override may omit it.
Result<std::vector<ServeDecl>> parse_serves(const YamlNode& node, std::string_view context,
                                            bool require_port);
Result<HealthDecl> parse_health(const YamlNode& node, std::string_view context);
Result<LimitsDecl> parse_limits(const YamlNode& node);
// `programs:` of a definition (a map of NAME: {names, search, packages, version_packages}); the
// stack file's `tools:` is the same map or a plain list of names (`field` names it in errors).
Result<std::vector<ProgramDecl>> parse_programs(const YamlNode& node,
                                                std::string_view field = "programs");
// The definition's limits, overridden field by field by the stack's, over default_limits().
ResourceLimits merge_limits(const LimitsDecl* definition, const LimitsDecl& stack);
Result<CommandDecl> parse_command(const YamlNode& node, std::string_view context);
Result<int> parse_signal(const YamlNode& node);
// The name of a stop signal a block may declare ("SIGTERM"), else the number. Not
// base/signal_name.h's signal_name, which names any signal the system knows: two functions of
// one name and signature let the linker pick one for both: `stackie kill --signal CONT`
// was refused and a segfault shown as "killed by 11".
std::string stop_signal_name(int signal);

}  // namespace stackie
