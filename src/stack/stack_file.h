// The stack file (DESIGN.md §4; stackie-stack.yml(5)) as parsed, before the block definitions
// are merged in and before interpolation and resolution.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "stack/block_def.h"
#include "stack/env_file.h"
#include "stack/stack_model.h"
#include "stack/yaml_node.h"

namespace stackie {

// `consumes: NAME: BLOCK` or `NAME: {port_type: T, block_override: B}`; an empty value means
// `{port_type: NAME}`.
struct ConsumeDecl {
  std::string name;
  std::string block;      // a block name (the short form or block_override)
  std::string port_type;  // match a provider by the type of a port it serves
  SourceLocation where;
  SourceLocation block_where;
};

// `volumes: NAME:` (a managed volume, storage/volumes/<stack>/<block>/NAME) or
// `NAME: /absolute/host/dir` (bind an existing directory). Both become ${paths.NAME}.
struct VolumeDecl {
  std::string name;
  std::optional<YamlNode> host_path;
  bool read_only = false;  // `NAME: {host: DIR, read_only: true}`: a bind the block cannot write
  // The compose-style list form (`- pgdata:/var/lib/postgresql/data`): a volume of the whole
  // project (volumes/<stack>/.shared/NAME, one for every block naming it), and a relative
  // host path is the stack directory's.
  std::string project_volume;
  bool relative_host = false;
  SourceLocation where;
};

// `watch: [GLOB...]` or `watch: {paths: [...], ignore: [...], action: restart|signal,
// signal: SIGHUP, debounce: 300ms}`.
struct WatchDecl {
  std::vector<YamlNode> paths;
  std::vector<YamlNode> ignore;
  WatchSpec::Action action = WatchSpec::Action::restart;
  int signal = 1;
  long long debounce_ms = 300;
  SourceLocation where;
};

struct StackBlockDecl {
  std::string name;
  SourceLocation where;
  // `catalog: stackie.postgres`: this block is an instance of that catalog definition under a
  // name of its own (a compose service `db`); empty = the block's name is the definition's.
  std::optional<YamlNode> catalog;
  NamedScalars vars;
  std::vector<SourceLocation> var_where;  // parallel to vars: the key positions
  std::vector<ServeDecl> serves;          // a definition's ports may be overridden
  std::vector<ConsumeDecl> consumes;
  std::vector<std::pair<std::string, SourceLocation>> depends_on;
  std::vector<std::pair<std::string, DependCondition>> depend_conditions;  // the map form
  std::optional<YamlNode> path;  // first-party block: the project directory
  CommandDecl command;
  NamedScalars environment;
  std::vector<EnvFileDecl> env_files;  // merged under `environment`, in order
  std::vector<YamlNode> profiles;      // empty: always started
  std::optional<WatchDecl> watch;
  std::vector<VolumeDecl> volumes;
  std::optional<RestartPolicy> restart;
  std::optional<HealthDecl> health;
  std::optional<int> stop_signal;
  std::optional<long long> stop_timeout_ms;
  std::map<std::string, bool> platform_sandbox;  // linux|macos|windows -> sandbox
  LimitsDecl limits;
  std::optional<YamlNode> version;  // catalog block: the major version wanted ("15")
  std::optional<YamlNode> network;  // first-party: localhost (default) or outbound
  std::vector<YamlNode> egress;     // outbound: allowed host:port patterns (empty = any)
  // `paths: {data: /var/lib/postgresql/data}`: the block's path NAME (its definition's, a
  // volume's, or else a new managed volume) shown inside the sandbox at that absolute path;
  // ${paths.NAME} then names the inside path. Key node, inside path node.
  std::vector<std::pair<YamlNode, YamlNode>> inside_paths;
  // `tools:`: programs the block runs besides its command, found as a definition's `programs:`
  // are (their directories shown read-only, on the block's PATH).
  std::vector<ProgramDecl> tools;
  // `mode: shared` (one instance for every stack that asks, stack/shared_mode.h) or `mode: own`
  // (the default: the stack's own instance). The node, for errors; absent = own.
  std::optional<YamlNode> mode;
  // `secrets: [NAME...]`: the secrets the block's definition may read (its `${secrets.NAME}`)
  // when it is not one of Stackie's own: the environment `up` runs in holds SSH_AUTH_SOCK,
  // HOME and cloud keys, which a definition from someone else's catalog is not given unasked.
  std::vector<YamlNode> secrets;
  bool shared() const { return mode && mode->text == "shared"; }
  // The directory the block's relative paths (path, env_file, volumes) are relative to: its
  // own file's, which differs from the stack file's for a block of a substack (`stacks:`).
  std::string dir;
};

// `stacks: {PATH: {}}` (or a list of PATHs): another stack file composed in, as it is or with
// `{blocks: {BLOCK: {FIELD: VALUE}}}` replacing fields of its blocks. PATH is a stack file or a
// directory holding one, relative to the including file's directory (stack/substacks.h).
struct SubstackDecl {
  YamlNode path;
  std::optional<YamlNode> overrides;  // the map under the path; empty = as it is
};

struct StackFile {
  std::string name;
  std::string file;  // absolute
  std::string dir;   // its directory
  SourceLocation where;
  // An absolute directory, or a name of config.toml's [storage_roots].
  std::optional<YamlNode> storage_root;
  // `sources:` directories of block definitions of the project, absolute, searched before the
  // catalog (with where each was written, for errors).
  std::vector<std::pair<std::string, SourceLocation>> sources;
  // The files composed in by `stacks:` (absolute, every level): protected like the stack file.
  std::vector<std::string> substack_files;
  std::vector<SubstackDecl> substacks;  // as declared; stack/substacks.h composes them in
  bool strict_ports = false;            // `ports: strict`: a taken host port is an error, not moved
  std::vector<StackBlockDecl> blocks;
};

// The names `stackie` looks for, in order, when no -f is given.
const std::vector<std::string>& stack_file_names();

// `file` if given (made absolute against `cwd`), else the first of stack_file_names() in `cwd`.
Result<std::string> find_stack_file(const std::string& file, const std::string& cwd);

Result<StackFile> load_stack_file(const std::string& absolute_path);
Result<StackFile> parse_stack_file(const YamlNode& root, const std::string& absolute_path);

Result<RestartPolicy> parse_restart(const YamlNode& node);
// `env_file:` as a stack block or a compose service writes it (EnvFileDecl).
Result<std::vector<EnvFileDecl>> parse_env_files(const YamlNode& node);
// A name of a block's `secrets:` list (compose: `x-stackie: {secrets: [...]}`).
Status check_secret_name(const YamlNode& node);

}  // namespace stackie
