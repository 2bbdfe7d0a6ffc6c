#include "supervisor/daemon_loader.h"

#include <cstdlib>
#include <functional>

#include "base/safe_open.h"
#include "stack/loader.h"
#include "stack/paths.h"
#include "stack/settings.h"
#include "supervisor/host_os.h"

namespace stackie {

namespace {

// The daemon's own view of where things are: its STACKIE_HOME, HOME and XDG_RUNTIME_DIR.
Environment daemon_environment(const std::string& home) {
  Environment env;
  for (const char* name : {"HOME", "XDG_RUNTIME_DIR", "TMPDIR"})
    if (const char* value = std::getenv(name)) env[name] = value;
  env["STACKIE_HOME"] = home;
  return env;
}

}  // namespace

StackLoader daemon_stack_loader(const std::string& home, HostPortAllocator allocate,
                                bool ports_on_host) {
  return [home, allocate, ports_on_host](const UpRequest& request,
                                         const RunningBlocks& running) -> Result<ResolvedStack> {
    LoadOptions options;
    options.blocks = request.blocks;
    options.profiles = request.profiles;
    options.running_blocks = running;
    options.allocate_host_port = allocate;
    options.ports_on_host = ports_on_host;
    options.file = request.file;
    options.cwd = request.cwd;
    options.project_name = request.project_name;
    for (const auto& [key, value] : request.env) options.env[key] = value;
    // The client's STACKIE_HOME does not move this daemon's storage.
    options.env["STACKIE_HOME"] = home;
    STACKIE_TRY_ASSIGN(settings, load_user_settings(options.env));
    options.settings = settings;
    options.no_sandbox = request.no_sandbox || settings.no_sandbox;
    if (auto socket = daemon_socket_path(home); socket.ok()) options.daemon_socket = *socket;
    // Shared instances stay in the user's storage, whatever --ephemeral does to the stack's.
    options.shared_storage_root =
        settings.storage_root.empty() ? storage_root(home, settings) : settings.storage_root;
    if (request.ephemeral) {
      // --ephemeral: storage in a directory of its own below daemon_ephemeral_base(), removed
      // when the stack goes down (the supervisor removes only a directory right below that
      // base). Both are made 0700, and refused when they exist but are not ours alone. A stack
      // file's own storage_root wins.
      std::string base = daemon_ephemeral_base(home);
      std::string root =
          base + "/ephemeral-" + std::to_string(std::hash<std::string>{}(request.file));
      STACKIE_TRY(open_storage_root(base, Privacy::private_));
      STACKIE_TRY(open_storage_root(root, Privacy::private_));
      options.settings.storage_root = root;
    }
    return load_stack(options);
  };
}

Result<std::string> daemon_socket_path(const std::string& home) {
  Environment env = daemon_environment(home);
  auto settings = load_user_settings(env);
  return socket_path(env, settings.ok() ? *settings : Settings{});
}

Result<int> daemon_api_port(const std::string& home) {
  STACKIE_TRY_ASSIGN(settings, load_user_settings(daemon_environment(home)));
  return settings.api_port;
}

std::string daemon_ephemeral_base(const std::string& home) {
  return ephemeral_base(home, trusted_runtime_dir());
}

std::string daemon_sandbox_backend(const std::string& home) {
  auto settings = load_user_settings(daemon_environment(home));
  return settings.ok() ? settings->sandbox_backend : "auto";
}

LogSettings daemon_log_settings(const std::string& home) {
  LogSettings logs;
  auto settings = load_user_settings(daemon_environment(home));
  if (settings.ok()) {
    logs.file_max_bytes = settings->log_max_size;
    logs.file_count = settings->log_max_files;
  }
  return logs;
}

}  // namespace stackie
