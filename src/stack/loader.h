// The one entry point of loading (DESIGN.md §3 step 2): stack file + block definitions +
// settings + secrets -> a fully interpolated, resolved ResolvedStack with one SandboxPolicy per
// block. Used by `stackie validate` and by the daemon. It never reads the process environment
// (the caller passes the client's) and never writes to the disk.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "stack/paths.h"
#include "stack/settings.h"
#include "stack/stack_model.h"

namespace stackie {

// The daemon's say on a block's host port (DESIGN.md §6): `wanted` is the declared port (or
// `host_port`); with `exact` (strict stacks, blocks on the host's network, which bind the port
// themselves) only that port will do, otherwise the next free one may be given. The error's
// message names the holder; the loader adds the position.
struct HostPortRequest {
  std::string stack;
  std::string block;
  std::string port_name;
  int wanted = 0;
  bool exact = false;
  std::string project_dir;  // the stack file's directory: with `stack`, whose ports these are
};
// The port given, and when it is not the wanted one, why (HostPortRequest, ServedPort).
struct HostPortGrant {
  int port = 0;
  std::string note;
};
using HostPortAllocator = std::function<Result<HostPortGrant>(const HostPortRequest&)>;

struct LoadOptions {
  std::string file;  // -f; empty = discovery in cwd (stack_file_names())
  std::string cwd;   // absolute
  Environment env;   // the client's environment (HOME, PATH, STACKIE_*, secrets…)
  Settings settings;
  std::vector<std::string> block_path;  // empty = default_block_path(env)
  // Stackie's own catalog, whose definitions read `${secrets.NAME}` without the stack listing
  // it in the block's `secrets:`. Used when block_path is given; else shipped_block_path().
  std::vector<std::string> shipped_block_path;
  bool no_sandbox = false;               // --no-sandbox: every block unsandboxed
  std::string os = host_os_name();       // for `platforms:` and install hints
  std::string program_root;              // tests: prefix of every program search glob
  HostPortAllocator allocate_host_port;  // empty: the wanted port, unchecked (validate)
  std::string project_name;              // -p NAME: the stack's name instead of the file's
  // Where `mode: shared` instances live (stack/shared_mode.h); empty: settings.storage_root,
  // else STACKIE_HOME/storage. The daemon sets it before --ephemeral moves the stack's root.
  std::string shared_storage_root;
  // The daemon's own socket, whose directory no block is given (besides the one `env` and
  // `settings` name): a restore's environment keeps only what the stack read, not the
  // XDG_RUNTIME_DIR the socket is in. Empty: only the one from env and settings.
  std::string daemon_socket;
  // The sandbox has no network namespace (the landlock backend): a sandboxed `network:
  // localhost` block binds its host port itself (the declared one or the next free, which
  // ${serves.X} then names), reaches what it consumes at the provider's host port, and its
  // policy opens exactly those TCP ports (SandboxPolicy::tcp_bind, tcp_connect).
  bool ports_on_host = false;
  // Which blocks (compose's meaning): with `blocks` empty, every block without `profiles` and
  // every block with one of `profiles`; else exactly the blocks named (whatever their
  // profiles). Either way plus everything they depend on or consume, and plus the blocks
  // `running_blocks(stack name)` lists that the file still has (an `up` of part of a stack that
  // is up leaves the rest up). A name or profile the file does not have is an error.
  std::vector<std::string> blocks;
  std::vector<std::string> profiles;
  std::function<std::vector<std::string>(const std::string& stack)> running_blocks;
};

Result<ResolvedStack> load_stack(const LoadOptions& options);

// Settings from $STACKIE_HOME/config.toml for this environment (missing file = defaults).
Result<Settings> load_user_settings(const Environment& env);

}  // namespace stackie
