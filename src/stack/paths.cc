#include "stack/paths.h"

#include <unistd.h>

#include <climits>

namespace stackie {

Result<std::string> stackie_home(const Environment& env) {
  auto found = env.find("STACKIE_HOME");
  if (found != env.end() && !found->second.empty()) {
    std::string home = slashed_path(found->second);
    if (!is_host_absolute_path(home))
      return Error{0, "STACKIE_HOME must be an absolute path, got '" + found->second + "'"};
    return normalize_path(home);
  }
  return default_stackie_home(env);
}

std::string config_path(const std::string& home) {
  return join_path(home, "config.toml");
}

std::string storage_root(const std::string& home, const Settings& settings) {
  if (!settings.storage_root.empty()) return normalize_path(settings.storage_root);
  return join_path(home, "storage");
}

Result<std::string> socket_path(const Environment& env, const Settings& settings) {
  if (!settings.socket_path.empty()) return settings.socket_path;
  return default_socket_path(env);
}

std::string pid_file(const std::string& home) {
  return join_path(home, "stackied.pid");
}

std::string state_file(const std::string& home) {
  return join_path(home, "state.json");
}

std::string daemon_log_file(const std::string& home) {
  return join_path(home, "stackied.log");
}

std::string volume_dir(const std::string& storage_root, const std::string& stack,
                       const std::string& name) {
  return join_path(storage_root, "volumes/" + stack + "/" + name);
}

std::string log_dir(const std::string& storage_root, const std::string& sandbox_id) {
  return join_path(storage_root, "logs/" + sandbox_id);
}

std::string tmp_dir(const std::string& storage_root, const std::string& sandbox_id) {
  return join_path(storage_root, "tmp/" + sandbox_id);
}

std::string block_short_name(const std::string& block) {
  if (block.rfind("stackie.", 0) != 0) return block;
  // Only to a name that could stand alone: "stackie.-b" left as it is, or its id could be
  // another pair's ("a" + "-b-c" would be a--b-c, the id of "a-b" + "c").
  const std::string rest = block.substr(8);
  return rest.empty() || rest[0] == '-' || rest[0] == '.' ? block : rest;
}

std::string doubled_dashes(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '-') out += '-';
  }
  return out;
}

std::string sandbox_id(const std::string& stack, const std::string& block) {
  return doubled_dashes(stack) + "-" + block_short_name(block);
}

std::string ephemeral_base(const std::string& home, const std::string& private_runtime_dir) {
  if (!private_runtime_dir.empty() && private_runtime_dir[0] == '/')
    return join_path(normalize_path(private_runtime_dir), "stackie/ephemeral");
  return join_path(home, "ephemeral");
}

std::vector<std::string> shipped_block_path() {
  std::vector<std::string> dirs;
  std::string exe = executable_dir();
  if (!exe.empty()) dirs.push_back(normalize_path(exe + "/../share/stackie/blocks"));
#ifdef STACKIE_INSTALL_DATADIR
  std::string relocated = relocated_install_dir(STACKIE_INSTALL_DATADIR "/stackie/blocks");
  if (!relocated.empty() && (dirs.empty() || dirs.back() != relocated)) dirs.push_back(relocated);
#endif
#ifdef STACKIE_DATADIR
  dirs.push_back(std::string(STACKIE_DATADIR) + "/blocks");
#endif
  return dirs;
}

std::vector<std::string> default_block_path(const Environment& env) {
  std::vector<std::string> dirs;
  auto found = env.find("STACKIE_BLOCK_PATH");
  if (found != env.end()) {
    size_t start = 0;
    const std::string& value = found->second;
    while (start <= value.size()) {
      size_t end = value.find(':', start);
      if (end == std::string::npos) end = value.size();
      if (end > start) dirs.push_back(value.substr(start, end - start));
      start = end + 1;
    }
  }
  for (auto& dir : shipped_block_path()) dirs.push_back(std::move(dir));
  return dirs;
}

std::string host_os_name() {
#if defined(__APPLE__)
  return "macos";
#elif defined(_WIN32)
  return "windows";
#else
  return "linux";
#endif
}

}  // namespace stackie
