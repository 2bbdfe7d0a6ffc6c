// A Compose file (docker-compose.yml, compose.yaml: the Compose Specification) as parsed,
// before it is mapped onto Stackie's blocks (compose_map.cc). Only the common subset a
// development stack uses is read into this model; every other key becomes one warning
// "FILE:LINE:COL: warning: ..." naming it, so nothing is dropped without a word.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "stack/block_def.h"
#include "stack/stack_file.h"
#include "stack/stack_model.h"
#include "stack/yaml_node.h"

namespace stackie {

// One published or exposed port: "127.0.0.1:8080:80", "5432", a range is several of these.
struct ComposePort {
  int container = 0;
  int host = 0;         // 0 = not published (expose), or published on the same port
  std::string host_ip;  // as written; empty = compose's default
  std::string name;     // the long form's `name`, else empty
  SourceLocation where;
};

// `volumes:` of a service: a named volume ("pgdata:/var/lib/postgresql/data"), a bind
// ("./src:/app:ro", "/abs:/x") or an anonymous volume ("/data").
struct ComposeVolume {
  enum class Kind { named, bind, anonymous };
  Kind kind = Kind::named;
  std::string source;  // the volume's name or the host path as written
  std::string target;  // inside the container
  bool read_only = false;
  SourceLocation where;
};

struct ComposeDepend {
  std::string service;
  DependCondition condition = DependCondition::healthy;
  bool long_form = false;
  SourceLocation where;
};

struct ComposeHealth {
  bool disabled = false;       // test: ["NONE"] or disable: true
  std::vector<YamlNode> exec;  // CMD: the argv; CMD-SHELL and a string: /bin/sh -c LINE
  std::optional<YamlNode> interval, timeout, retries, start_period;
  SourceLocation where;
  SourceLocation test_where;
};

// A list that compose also accepts as one string: `command: npm start` or a list.
struct ComposeCommand {
  bool present = false;
  bool shell = false;  // written as one string
  std::vector<YamlNode> argv;
  SourceLocation where;
};

struct ComposeService {
  std::string name;
  SourceLocation where;
  std::optional<YamlNode> image;
  std::optional<YamlNode> build_context;  // `build: DIR` or `build: {context: DIR}`
  ComposeCommand command;
  ComposeCommand entrypoint;
  std::vector<ComposePort> ports;
  std::vector<ComposePort> expose;
  NamedScalars environment;               // interpolation already in Stackie's syntax
  std::vector<SourceLocation> env_where;  // parallel to environment
  std::vector<EnvFileDecl> env_files;     // `env_file:`, relative to the compose file's dir
  std::vector<YamlNode> profiles;         // `profiles:`
  std::vector<ComposeDepend> depends_on;
  std::optional<ComposeHealth> health;
  std::optional<YamlNode> restart;
  std::optional<YamlNode> working_dir;
  std::optional<YamlNode> stop_signal;
  std::optional<YamlNode> stop_grace_period;
  std::vector<ComposeVolume> volumes;
  // `x-stackie:` of the service: what Stackie needs that an image would have held.
  ComposeCommand stackie_command;
  std::optional<YamlNode> stackie_path;
  std::optional<YamlNode> stackie_network;
  std::vector<YamlNode> stackie_secrets;  // x-stackie.secrets: StackBlockDecl::secrets
};

struct ComposeProject {
  std::string name;  // `name:`, else the directory's name made a valid stack name
  std::string file;  // absolute
  std::string dir;
  SourceLocation where;
  std::vector<ComposeService> services;
  std::vector<std::string> volumes;  // top-level `volumes:` names
  std::vector<std::string> warnings;
};

// Compose's file names, looked for after stack_file_names() ("compatibility mode").
const std::vector<std::string>& compose_file_names();

// Whether a parsed file is a Compose file rather than a stack file: a top-level `services:`
// map (a stack file has one key, the stack's name, holding `blocks`).
bool looks_like_compose(const YamlNode& root);

// How a compose `${NAME}` without a default is resolved when the stack is loaded: whether
// NAME has a value now (environment or .env), to choose between it and the written default.
using SecretKnown = std::function<bool(const std::string& name)>;

Result<ComposeProject> parse_compose(const YamlNode& root, const std::string& absolute_path,
                                     const SecretKnown& known);

// What the mapping needs of the host: the ports the catalog block NAME serves (nullopt when
// the catalog has no such block), and whether a path is a directory.
struct ComposeMapContext {
  std::function<std::optional<std::vector<ServedPort>>(const std::string& name)> catalog_ports;
  std::function<bool(const std::string& path)> is_directory;
};

// The compose project as a stack file (the block model), with a warning for what did not map.
Result<StackFile> map_compose(ComposeProject& project, const ComposeMapContext& context);

// A stack file or, when it looks like one, a Compose file mapped onto blocks; the Compose
// mapping's warnings are appended to `warnings`. `block_path` is the catalog's directories.
Result<StackFile> load_any_stack_file(const std::string& absolute_path,
                                      const std::map<std::string, std::string>& env,
                                      const std::vector<std::string>& block_path,
                                      std::vector<std::string>& warnings);

// `stackie convert`: the Compose file as stackie-stack.yml text, what did not map as comments.
Result<std::string> convert_compose(const std::string& absolute_path,
                                    const std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& block_path);

// "FILE:LINE:COL: warning: TEXT", the form ResolvedStack::warnings uses.
std::string compose_warning(const SourceLocation& where, const std::string& text);

}  // namespace stackie
