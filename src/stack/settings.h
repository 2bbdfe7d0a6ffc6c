// User settings, $STACKIE_HOME/config.toml (stackie-config(5)). Every key has a default; a
// missing file is all defaults; an unknown key is an error with its position.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "stack/stack_model.h"

namespace stackie {

// The most rotated files a log stream may keep (logs.max_files): what the writer cleans up
// and a follower of the files looks through stop here.
inline constexpr int kMostLogFiles = 1000;

struct Settings {
  std::string storage_root;  // empty = $STACKIE_HOME/storage; else absolute
  std::string socket_path;   // empty = DESIGN.md §4 default (see socket_path())
  std::uint64_t log_max_size = 10ull * 1024 * 1024;  // bytes per log file before rotation
  int log_max_files = 5;                             // rotated files kept per stream
  RestartPolicy default_restart = RestartPolicy::on_failure;
  bool no_sandbox = false;  // run every block unsandboxed (as --no-sandbox)
  // [sandbox] backend (Linux): "auto" (namespaces where the host allows them, else landlock),
  // "namespaces" or "landlock" (stackie-lockbox(1) BACKENDS).
  std::string sandbox_backend = "auto";
  int api_port = 0;  // the HTTP API on 127.0.0.1:api_port (stackie-api(7)); 0 = off
  // [storage_roots] NAME = "/abs/dir": what a stack file's `storage_root: NAME` means on this
  // machine (a committed stack file names a disk without knowing its path).
  std::vector<std::pair<std::string, std::string>> storage_roots;
  bool operator==(const Settings&) const = default;
};

Result<Settings> load_settings(const std::string& path);
Result<Settings> parse_settings(std::string_view text, const std::string& path);

}  // namespace stackie
