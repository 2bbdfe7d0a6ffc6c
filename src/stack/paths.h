// Where Stackie keeps things (DESIGN.md §4). Pure functions of the passed environment and
// settings: nothing here reads the process environment or touches the disk, so the daemon can
// answer for a client whose environment differs from its own.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/fs_path.h"
#include "stack/settings.h"

namespace stackie {

using Environment = std::map<std::string, std::string>;

// $STACKIE_HOME, else default_stackie_home(). Must be absolute.
Result<std::string> stackie_home(const Environment& env);
std::string config_path(const std::string& home);  // HOME/config.toml
// settings.storage_root, else HOME/storage.
std::string storage_root(const std::string& home, const Settings& settings);
// settings.socket_path, else default_socket_path(env).
Result<std::string> socket_path(const Environment& env, const Settings& settings);

// What differs per OS (paths_posix.cc, paths_windows.cc):
// - the home without STACKIE_HOME: $HOME/.stackie; on Windows %LOCALAPPDATA%/stackie (the
//   user's own, not roaming: the storage holds databases);
// - the daemon's endpoint: $XDG_RUNTIME_DIR/stackie/stackied.sock, else HOME/run/stackied.sock;
//   on Windows the named pipe \\.\pipe\stackie-HASH, HASH from the home (two homes, two
//   daemons), whatever XDG_RUNTIME_DIR says (Wine passes the Unix one through);
// - `path` with the OS's other separator turned into '/' (Windows: '\'; elsewhere unchanged).
Result<std::string> default_stackie_home(const Environment& env);
Result<std::string> default_socket_path(const Environment& env);
std::string slashed_path(const std::string& path);
// An absolute path as the file system takes it, to tell whether one directory holds another:
// links resolved where it exists (stack/file_kind.h resolved_path), normalised, and on Windows
// case folded.
std::string path_for_comparison(const std::string& path);
std::string pid_file(const std::string& home);         // HOME/stackied.pid
std::string state_file(const std::string& home);       // HOME/state.json
std::string daemon_log_file(const std::string& home);  // HOME/stackied.log (background daemon)

// Per-stack and per-block storage under a storage root.
std::string volume_dir(const std::string& storage_root, const std::string& stack,
                       const std::string& name);  // volumes/<stack>/<name>
std::string log_dir(const std::string& storage_root, const std::string& sandbox_id);
std::string tmp_dir(const std::string& storage_root, const std::string& sandbox_id);

// A block's name with a leading "stackie." dropped (when what is left is a name of its own): what
// names its sandbox and its volumes, so two blocks of one stack may not share it (the loader
// refuses "redis" beside "stackie.redis").
std::string block_short_name(const std::string& block);
// `text` with every '-' written twice: a run of '-' of even length never holds the lone '-' that
// ends a stack's part of a sandbox id (sandbox_id, shared_sandbox_id).
std::string doubled_dashes(const std::string& text);
// "<stack>-<short name>", with every '-' of the stack's name doubled ("my-app" + "api" is
// "my--app-api"): the first lone '-' ends the stack's part, as a block's name never starts with
// '-'. So two blocks never share an id, and with it a /tmp, a log directory, a cgroup, a join
// name or a Windows block SID: "web" + "api-db" is web-api-db, "web-api" + "db" web--api-db.
std::string sandbox_id(const std::string& stack, const std::string& block);
// Where --ephemeral stacks keep their storage (issue 14): $XDG_RUNTIME_DIR/stackie/ephemeral
// when the caller found that directory private (the login session's own, in memory), else
// HOME/ephemeral. Never a predictable name in a shared /tmp, which another user could make first.
std::string ephemeral_base(const std::string& home, const std::string& private_runtime_dir);

// Block catalog search order: $STACKIE_BLOCK_PATH (colon-separated), then
// <dir of the running executable>/../share/stackie/blocks (a build tree),
// <relocated prefix>/<datadir>/stackie/blocks (an installed tree wherever it is), then
// STACKIE_DATADIR/blocks (the configured prefix).
std::vector<std::string> default_block_path(const Environment& env);
// The directories of that path after $STACKIE_BLOCK_PATH: the catalog shipped with Stackie.
std::vector<std::string> shipped_block_path();

// This account's home as the system knows it (getpwuid; "" on Windows or when unknown), and
// its runtime directory (/run/user/UID on Linux; "" elsewhere): what no environment can hide.
std::string account_home_dir();
std::string account_runtime_dir();

// "linux", "macos" or "windows": the host, for `platforms:` and package hints.
std::string host_os_name();

}  // namespace stackie
