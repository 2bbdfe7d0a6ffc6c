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

struct ResolvedBlock {
  std::string name;                  // key in the stack: "stackie.postgres", "api"
  std::string sandbox_id;            // "<stack>-<block>" with the "stackie." prefix dropped
  bool first_party = false;          // defined in the stack itself (`path` + `command`)
  std::string definition_file;       // where the block's definition came from
  std::vector<std::string> command;  // argv, interpolated
  std::vector<ServedPort> serves;
  std::vector<ConsumedPort> consumes;
  std::vector<std::string> depends_on;  // explicit depends_on plus consumes providers
  std::vector<InitStep> init;
  HealthCheck health;
  RestartPolicy restart = RestartPolicy::on_failure;
  int stop_signal = 15;  // SIGTERM
  Milliseconds stop_timeout{10000};
  bool sandboxed = true;  // false when `platforms: {OS: {sandbox: false}}` or --no-sandbox
  SandboxPolicy policy;   // environment, paths, network, identity, working dir
  std::vector<std::string> secret_names;  // environment entries whose values are secrets (masked)
  // Every secret value this block's strings contain, so any display (validate, logs of the
  // daemon's own messages) can mask it wherever it appears. Never printed.
  std::vector<std::string> secret_values;
  // Absolute paths of the programs found for the block (`programs:` and a first-party
  // command), in declaration order: name -> path.
  std::vector<std::pair<std::string, std::string>> programs;
  bool operator==(const ResolvedBlock&) const = default;
};

struct ResolvedStack {
  std::string name;
  std::string file;                   // absolute path of the stack file
  std::string storage_root;           // absolute
  std::vector<ResolvedBlock> blocks;  // in start order (dependencies first)
  // The variables of the caller's environment the load used (PATH, secrets found there): all
  // a restore needs of it.
  std::vector<std::string> env_referenced;
  // Not errors, but worth the user's eye: "FILE:LINE:COL: warning: ..." (a secret on a
  // command line, a secrets file others can read).
  std::vector<std::string> warnings;
  bool operator==(const ResolvedStack&) const = default;
};

std::string_view to_string(RestartPolicy policy);
std::string_view to_string(HealthCheck::Kind kind);

}  // namespace stackie
