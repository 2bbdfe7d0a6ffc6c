// The resolved stack: what the loader (stack file + block definitions + settings + secrets,
// after interpolation and resolution) hands to `stackie validate` and to the daemon. Plain
// structs only; nothing here knows YAML or JSON.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "policy/policy.h"

namespace stackie {

using Milliseconds = std::chrono::milliseconds;

// A port a block listens on (`serves: NAME: {port, type}`).
struct ServedPort {
  std::string name;   // "postgres"
  std::string type;   // "postgres", "redis", "http"…; matched by `consumes: {port_type}`
  int port = 0;       // the port the block listens on inside its own network namespace
  int host_port = 0;  // requested host-side port (0 = same as `port`; the daemon allocates)
  bool operator==(const ServedPort&) const = default;
};

// A served port whose host port is not the one the stack asked for (`host_port`, else `port`),
// and why in one line ("5432 is taken by pid 812 (postgres); using 5434").
struct MovedPort {
  std::string port;  // ServedPort::name
  int wanted = 0;
  int host = 0;
  std::string note;
  bool operator==(const MovedPort&) const = default;
};

// One `consumes` entry after resolution: the consumer reaches the provider's port at
// `local_port` on 127.0.0.1 inside its own namespace.
struct ConsumedPort {
  std::string name;           // the key under `consumes`
  std::string provider;       // block name in this stack
  std::string provider_port;  // ServedPort::name of the provider
  int local_port = 0;         // what ${consumes.NAME.PORT} resolved to
  bool operator==(const ConsumedPort&) const = default;
};

struct HealthCheck {
  enum class Kind { none, tcp, http, exec };
  Kind kind = Kind::none;
  std::string port_name;          // tcp/http: which `serves` port
  int port = 0;                   // tcp/http: that port, inside the block
  std::string http_path = "/";    // http
  int http_status = 200;          // http: expected status
  std::vector<std::string> argv;  // exec: runs inside the sandbox (lockbox --join)
  Milliseconds interval{1000};
  Milliseconds timeout{1000};
  int retries = 3;
  Milliseconds start_period{0};
  bool operator==(const HealthCheck&) const = default;
};

// One `init` step. Exactly one of: a guarded group (`if_not_exists` + `then`), `run`, or
// `append_file`. A guard is evaluated once, before its group runs.
struct InitStep {
  std::string if_not_exists;  // path inside the sandbox
  std::vector<InitStep> then;
  std::vector<std::string> run;  // argv
  std::string append_path;       // path inside the sandbox
  std::string append_text;
  bool operator==(const InitStep&) const = default;
};

enum class RestartPolicy { no, on_failure, always };

// When a dependant may start (`depends_on: {BLOCK: {condition: ...}}`, as in compose):
// `healthy` (the default: running, and healthy when it has a check), `started` (its process
// runs), `completed_successfully` (a one-shot task, e.g. a migration, exited 0).
enum class DependCondition { healthy, started, completed_successfully };

// `watch:` of a first-party block: what `stackie watch` (and `up --watch`) reacts to. Globs are
// relative to the block's project directory: `*` and `?` within a name, `**` across
// directories; a glob without '/' matches a name at any depth; a match on a directory takes
// everything below it.
struct WatchSpec {
  enum class Action { restart, signal };
  std::string root;                // the project directory (absolute); empty: no watch
  std::vector<std::string> paths;  // what counts ("." for all)
  std::vector<std::string> ignore;
  Action action = Action::restart;
  int signal = 1;  // SIGHUP, for Action::signal
  Milliseconds debounce{300};
  bool operator==(const WatchSpec&) const = default;
};

struct ResolvedBlock {
  std::string name;                  // key in the stack: "stackie.postgres", "api"
  std::string sandbox_id;            // "<stack>-<block>" with the "stackie." prefix dropped
  bool first_party = false;          // defined in the stack itself (`path` + `command`)
  std::string definition_file;       // where the block's definition came from
  std::vector<std::string> command;  // argv, interpolated
  // The program the command runs as written ("./serve.sh") and where ("stackie-stack.yml:12:7"),
  // for the message when it cannot be run (exit 126/127): empty when not known.
  std::string command_program;
  std::string command_where;
  std::vector<ServedPort> serves;
  std::vector<MovedPort> moved_ports;  // host side only: never a reason to restart the block
  std::vector<ConsumedPort> consumes;
  std::vector<std::string> depends_on;  // explicit depends_on plus consumes providers
  // Conditions other than `healthy`, by dependency name.
  std::vector<std::pair<std::string, DependCondition>> depend_conditions;
  std::vector<InitStep> init;
  HealthCheck health;
  RestartPolicy restart = RestartPolicy::on_failure;
  int stop_signal = 15;  // SIGTERM
  Milliseconds stop_timeout{10000};
  bool sandboxed = true;  // false when `platforms: {OS: {sandbox: false}}` or --no-sandbox
  SandboxPolicy policy;   // environment, paths, network, identity, working dir
  // `network: outbound`: outbound TCP through the daemon's HTTP proxy, listening at
  // 127.0.0.1:egress_port inside the block's namespace (HTTP(S)_PROXY point there).
  bool outbound = false;
  int egress_port = 0;
  std::vector<std::string> egress_allow;  // host:port patterns; empty = any
  std::vector<std::string> secret_names;  // environment entries whose values are secrets (masked)
  // Every secret value this block's strings contain, so any display (validate, logs of the
  // daemon's own messages) can mask it wherever it appears. Never printed.
  std::vector<std::string> secret_values;
  // Absolute paths of the programs found for the block (`programs:` and a first-party
  // command), in declaration order: name -> path.
  std::vector<std::pair<std::string, std::string>> programs;
  std::vector<std::string> profiles;  // `profiles:`; empty: started by every `up`
  WatchSpec watch;
  // Where each environment entry came from, parallel to policy.environment: "app.env:3:1",
  // "stackie-stack.yml:12:7" (relative to the stack file's directory when below it), or a word
  // for what the loader added ("default", "network: outbound").
  std::vector<std::string> environment_sources;
  // The env files the block read (absolute): a first-party block's project bind shows those
  // below it read-only, as the stack file itself.
  std::vector<std::string> env_files;
  // `mode: shared`: the one instance of a catalog block that every stack asking for it shares
  // (stackie-stack.yml(5), SHARED BLOCKS): "stackie.postgres", or "stackie.postgres@15" with a
  // version; empty for a block of the stack's own. Its paths, sandbox id and logs are the
  // instance's (below the user's storage root, never a stack's directory).
  std::string shared_instance;
  // What a second stack must ask for alike to share it, in order: "definition", "version",
  // "vars.NAME" (interpolated), "serves.NAME" ("5432/postgres"), "limits". Never printed whole:
  // a var may hold a secret.
  std::vector<std::pair<std::string, std::string>> shared_settings;
  bool operator==(const ResolvedBlock&) const = default;
};

// A directory a block can write besides its storage (a project, a host volume), and a block
// that can (stack/writable_dirs.h).
struct WritableDir {
  std::string path;
  std::string writer;
  bool operator==(const WritableDir&) const = default;
};

// A path that decides the next `up` (a secrets or env file, a catalog directory) that did not
// exist when the stack was loaded, below a directory one of its blocks can write: one made there
// later may be the block's (supervisor/stack_neighbours.h).
struct AbsentDecisive {
  std::string path;
  WritableDir dir;
  bool operator==(const AbsentDecisive&) const = default;
};

struct ResolvedStack {
  std::string name;
  std::string file;                   // absolute path of the stack file
  std::string storage_root;           // absolute
  std::vector<ResolvedBlock> blocks;  // in start order (dependencies first)
  // The blocks of the file this load left out (LoadOptions::blocks and profiles), with their
  // profiles, in file order.
  std::vector<std::pair<std::string, std::vector<std::string>>> skipped;
  // True when the blocks are the file's default set (no names, no running blocks added): a
  // restore may then take the file's default again; otherwise it needs the names.
  bool default_selection = true;
  // The variables of the caller's environment the load used (PATH, secrets found there): all
  // a restore needs of it.
  std::vector<std::string> env_referenced;
  // The outermost directories its blocks can write besides their storage, and the paths that
  // decide how it runs (its project directory, substack, secrets and env files, sources): what
  // the daemon checks against other stacks' (supervisor/stack_neighbours.h).
  std::vector<WritableDir> writable_dirs;
  std::vector<std::string> decisive_paths;
  std::vector<AbsentDecisive> absent_decisive;
  // The decisive files and directories that exist, wherever they are (the stack file, its
  // substacks, secrets and env files, sources): what this load read. The daemon compares them
  // with the files blocks were seen to make (a planted .env moved along with its project).
  std::vector<std::string> decisive_files;
  // Not errors, but worth the user's eye: "FILE:LINE:COL: warning: ..." (a secret on a
  // command line, a secrets file others can read).
  std::vector<std::string> warnings;
  bool operator==(const ResolvedStack&) const = default;
};

std::string_view to_string(RestartPolicy policy);
std::string_view to_string(DependCondition condition);
std::string_view to_string(HealthCheck::Kind kind);

}  // namespace stackie
