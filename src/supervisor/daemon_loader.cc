#include "supervisor/daemon_loader.h"

#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "stack/loader.h"
#include "stack/paths.h"
#include "stack/settings.h"

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

StackLoader daemon_stack_loader(const std::string& home, HostPortAllocator allocate) {
  return [home, allocate](const UpRequest& request) -> Result<ResolvedStack> {
    LoadOptions options;
    options.allocate_host_port = allocate;
    options.file = request.file;
    options.cwd = request.cwd;
    options.project_name = request.project_name;
    for (const auto& [key, value] : request.env) options.env[key] = value;
    // The client's STACKIE_HOME does not move this daemon's storage.
    options.env["STACKIE_HOME"] = home;
    STACKIE_TRY_ASSIGN(settings, load_user_settings(options.env));
    options.settings = settings;
    options.no_sandbox = request.no_sandbox || settings.no_sandbox;
    if (request.ephemeral) {
      // --ephemeral: storage under ephemeral_base(), removed when the stack goes down (the
      // supervisor removes only paths of that shape). A stack file's own storage_root wins.
      std::string base = ephemeral_base(std::getenv("TMPDIR"), ::getuid());
      options.settings.storage_root =
          base + "/ephemeral-" + std::to_string(std::hash<std::string>{}(request.file));
    }
    return load_stack(options);
  };
}

std::string daemon_socket_path(const std::string& home) {
  Environment env = daemon_environment(home);
  auto settings = load_user_settings(env);
  auto path = socket_path(env, settings.ok() ? *settings : Settings{});
  return path.ok() ? *path : std::string();
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
