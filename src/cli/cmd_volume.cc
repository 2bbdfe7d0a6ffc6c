// `stackie volume ls|rm`: the stacks' volumes in the user's storage root, with their sizes, and
// removing one stack's volumes (refused while that stack is up: `stackie down -v` is for that).
#include <uv.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "base/directories.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/loader.h"

namespace stackie::cli {

extern const char kVolumeUsage[] =
    "Usage: stackie volume ls [--json]\n"
    "       stackie volume rm STACK [--yes]\n"
    "\n"
    "ls: every stack's volumes under the storage root (config.toml's storage_root, default\n"
    "$STACKIE_HOME/storage): STACK SIZE PATH. rm: remove one stack's volumes, after a\n"
    "confirmation on a terminal; refused while the stack is up (use stackie down -v).\n"
    "A stack file's own storage_root is not looked at: down -v removes those.\n"
    "\n"
    "Options:\n"
    "      --json  ls: {\"v\":1,\"volumes\":[{\"stack\",\"path\",\"bytes\"}]}\n"
    "  -y, --yes   rm: do not ask\n"
    "\n"
    "Exit status: 0, 1 failed or not confirmed, 2 usage error.\n";

namespace {

Result<std::string> volumes_root() {
  Environment env = current_environment();
  STACKIE_TRY_ASSIGN(home, stackie_home(env));
  STACKIE_TRY_ASSIGN(settings, load_user_settings(env));
  return storage_root(home, settings) + "/volumes";
}

// libuv's scandir: the entry types without a stat each, on every platform (UTF-8 names on
// Windows too).
std::vector<std::string> stacks_with_volumes(const std::string& root) {
  std::vector<std::string> names;
  uv_fs_t request;
  if (uv_fs_scandir(uv_default_loop(), &request, root.c_str(), 0, nullptr) >= 0) {
    uv_dirent_t entry;
    while (uv_fs_scandir_next(&request, &entry) != UV_EOF)
      if (entry.name[0] != '.' && entry.type == UV_DIRENT_DIR) names.emplace_back(entry.name);
  }
  uv_fs_req_cleanup(&request);
  std::sort(names.begin(), names.end());
  return names;
}

// Whether the daemon (if one runs) has `stack` up: its volumes are in use then.
bool stack_is_up(const std::string& stack) {
  auto path = daemon_socket_path();
  if (!path.ok()) return false;
  auto client = ipc::Client::connect(*path, {});
  if (!client.ok()) return false;
  auto reply = client->call("ps", Json::object({{"stack", stack}}));
  return reply.ok() && reply->ok();
}

int volume_ls(std::span<char*> argv) {
  ArgWalker args("volume", argv);
  bool json = false;
  while (!args.done()) {
    if (args.flag("", "--json"))
      json = true;
    else
      return usage_error("volume", "unknown option '" + std::string(args.current()) + "'");
  }
  auto root = volumes_root();
  if (!root.ok()) {
    std::fprintf(stderr, "stackie: %s\n", root.error().message.c_str());
    return kExitFailed;
  }
  Json list = Json::array();
  std::vector<std::vector<std::string>> rows = {{"STACK", "SIZE", "PATH"}};
  for (const auto& stack : stacks_with_volumes(*root)) {
    std::string path = *root + "/" + stack;
    uint64_t bytes = disk_usage(path);
    list.push_back(Json::object({{"stack", stack}, {"path", path}, {"bytes", bytes}}));
    rows.push_back({stack, format_bytes(bytes), path});
  }
  if (json) {
    print_json(Json::object({{"v", 1}, {"volumes", list}}));
    return kExitOk;
  }
  size_t width[2] = {0, 0};
  for (const auto& row : rows)
    for (size_t i = 0; i < 2; ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows)
    std::printf("%-*s   %*s   %s\n", static_cast<int>(width[0]), row[0].c_str(),
                static_cast<int>(width[1]), row[1].c_str(), row[2].c_str());
  return kExitOk;
}

int volume_rm(std::span<char*> argv) {
  ArgWalker args("volume", argv);
  std::string stack;
  bool yes = false;
  while (!args.done()) {
    if (args.flag("-y", "--yes")) {
      yes = true;
    } else if (args.current().starts_with("-") || !stack.empty()) {
      return usage_error("volume", "unexpected '" + std::string(args.current()) + "'");
    } else {
      stack = args.current();
      args.next();
    }
  }
  if (stack.empty()) return usage_error("volume", "rm needs a STACK");
  auto root = volumes_root();
  if (!root.ok()) {
    std::fprintf(stderr, "stackie: %s\n", root.error().message.c_str());
    return kExitFailed;
  }
  auto names = stacks_with_volumes(*root);
  if (std::find(names.begin(), names.end(), stack) == names.end()) {
    std::fprintf(stderr, "stackie: stack %s has no volumes in %s\n", stack.c_str(), root->c_str());
    return kExitFailed;
  }
  if (stack_is_up(stack)) {
    std::fprintf(stderr, "stackie: stack %s is up and uses its volumes: stackie down -v %s\n",
                 stack.c_str(), stack.c_str());
    return kExitFailed;
  }
  std::string path = *root + "/" + stack;
  uint64_t bytes = disk_usage(path);
  if (!yes && !confirm("Remove " + path + " (" + format_bytes(bytes) + ", for good)?"))
    return kExitFailed;
  if (auto removed = remove_tree(path); !removed.ok()) {
    std::fprintf(stderr, "stackie: %s\n", removed.error().message.c_str());
    return kExitFailed;
  }
  std::printf("removed %s (%s)\n", path.c_str(), format_bytes(bytes).c_str());
  return kExitOk;
}

}  // namespace

int run_volume(std::span<char*> argv) {
  if (argv.size() < 2) return usage_error("volume", "ls or rm is required");
  std::string_view what = argv[1];
  if (what == "ls") return volume_ls(argv.subspan(1));
  if (what == "rm") return volume_rm(argv.subspan(1));
  return usage_error("volume", "unknown subcommand '" + std::string(what) + "' (ls or rm)");
}

}  // namespace stackie::cli
