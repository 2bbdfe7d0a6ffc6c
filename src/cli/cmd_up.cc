// `stackie up` and `stackie down`: start a stack through the daemon (autostarting it) and
// report per-block progress; stop it again.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/terminal_size.h"
#include "cli/terminal_text.h"
#include "cli/up_foreground.h"
#include "cli/up_progress.h"

namespace stackie::cli {

extern const char kUpUsage[] =
    "Usage: stackie up [-f FILE] [-p NAME] [--profile NAME]... [--ephemeral] [--no-sandbox]\n"
    "                  [--detach | --wait] [--color=WHEN] [BLOCK...]\n"
    "\n"
    "Start the stack in FILE (default: stackie-stack.yml, ... in the current directory) through\n"
    "the daemon, starting stackied first when it is not running, and wait until every block is\n"
    "running (and healthy). On a terminal, one status line per block (name, state, health,\n"
    "elapsed) is redrawn in place; otherwise one plain line per block state change.\n"
    "Then, when standard output is a terminal: every block's log lines until Ctrl-C, which\n"
    "stops the stack (exit 130; a second Ctrl-C kills the blocks left); otherwise (a script,\n"
    "a pipe) or with --wait, return.\n"
    "The whole client environment is sent: the loader reads secrets and ${...} from it.\n"
    "Which blocks: every block without `profiles:` and those with an active profile; with\n"
    "BLOCK..., those blocks (whatever their profiles); either way with what they depend on.\n"
    "Blocks of the stack that are already up stay up.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  the stack file\n"
    "      --profile NAME\n"
    "                   also start the blocks with this profile (repeatable)\n"
    "  -p, --project-name NAME\n"
    "                   the stack's name instead of the file's (a second checkout of a\n"
    "                   project: a stack is its name and its directory)\n"
    "      --ephemeral  keep volumes in a throw-away storage root\n"
    "      --no-sandbox run first-party blocks unsandboxed (catalog blocks stay sandboxed)\n"
    "  -d, --detach     return once the stack is loaded and starting\n"
    "      --wait       return once every block is running, also on a terminal\n"
    "      --watch      then watch the blocks' files, as `stackie watch` (until Ctrl-C)\n"
    "      --color WHEN auto (live lines on a terminal without NO_COLOR), always, never (plain)\n"
    "\n"
    "Exit status: 0 all blocks running (or, in the foreground, the stack was taken down\n"
    "elsewhere), 1 the stack does not load or a block failed (its log tail is printed), 2 usage\n"
    "error, 3 the daemon could not be reached, 130 stopped by Ctrl-C in the foreground.\n";

extern const char kDownUsage[] =
    "Usage: stackie down [-f FILE | STACK] [-v] [--yes]\n"
    "       stackie down [-f FILE] BLOCK...\n"
    "\n"
    "Stop every block of a stack (reverse start order) and forget it. Without arguments, the\n"
    "stack of the file in the current directory. Volumes stay unless -v is given.\n"
    "With BLOCK... (BLOCK or STACK/BLOCK; one word that names a stack that is up is that\n"
    "stack): stop those blocks and every block that depends on them, and leave them out of\n"
    "the stack until an `up` names them (or their profile) again; the rest keep running.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  the stack brought up from FILE\n"
    "  -v, --volumes    also remove the stack's volumes (its databases' data); asks first on a\n"
    "                   terminal\n"
    "  -y, --yes        do not ask (scripts; required for -v when stdin is not a terminal)\n"
    "\n"
    "Exit status: 0 stopped, 1 no such stack, 2 usage error, 3 no daemon.\n";

namespace {

void print_progress(const ipc::Event& event) {
  if (event.name != "progress") return;
  std::string message = event.data["message"].string_or("");
  std::printf("%s: %s%s%s\n", event.data["block"].string_or("?").c_str(),
              event.data["state"].string_or("?").c_str(), message.empty() ? "" : " - ",
              message.c_str());
  std::fflush(stdout);
}

// "stackie.postgres: 5432 is taken by pid 812 (postgres); using 5434": one line per served
// port that did not get the host port the stack asked for.
void print_moved_ports(const Json& blocks) {
  if (!blocks.is_array()) return;
  for (const auto& row : blocks.as_array())
    for (const auto& port : row["ports"].is_array() ? row["ports"].as_array() : Json::Array{})
      if (port["wanted"].is_int())
        std::printf("%s: %s\n", row["name"].string_or("?").c_str(),
                    port["note"].string_or("moved").c_str());
}

// Where to reach each served port from the host: a URL for http, host:port otherwise.
void print_endpoints(const Json& blocks) {
  if (!blocks.is_array()) return;
  std::vector<std::array<std::string, 3>> rows;
  for (const auto& row : blocks.as_array())
    for (const auto& port : row["ports"].is_array() ? row["ports"].as_array() : Json::Array{}) {
      std::string host = port["host"].string_or("?");
      std::string type = port["type"].string_or("");
      std::string where = type == "http" || type == "https" ? type + "://" + host + "/" : host;
      rows.push_back({row["name"].string_or("?"), port["name"].string_or("?"), where});
    }
  size_t name_width = 0, port_width = 0;
  for (const auto& r : rows) {
    name_width = std::max(name_width, r[0].size());
    port_width = std::max(port_width, r[1].size());
  }
  for (const auto& r : rows)
    std::printf("  %-*s  %-*s  %s\n", static_cast<int>(name_width), r[0].c_str(),
                static_cast<int>(port_width), r[1].c_str(), r[2].c_str());
}

// One-shot tasks (`restart: "no"`, e.g. a migration) are done, not up: say how they ended.
void print_tasks(const Json& blocks) {
  if (!blocks.is_array()) return;
  for (const auto& row : blocks.as_array())
    if (row["state"].string_or("") == "stopped")
      std::printf("  task %s completed (%s)\n", row["name"].string_or("?").c_str(),
                  row["message"].string_or("exit status 0").c_str());
}

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Live lines need a terminal that understands cursor movement; NO_COLOR (no-color.org) and
// --color=never ask for plain text, which also keeps logs and pipes readable.
UpProgressView::Options view_options(const std::string& color) {
  const char* term = std::getenv("TERM");
  bool terminal = stdout_is_tty() && std::getenv("NO_COLOR") == nullptr &&
                  !(term != nullptr && std::string_view(term) == "dumb");
  UpProgressView::Options options;
  options.live = color == "always" || (color == "auto" && terminal);
  options.color = options.live;
  TerminalSize size = stdout_terminal_size();
  if (size.columns > 0) options.width = size.columns;
  if (size.rows > 0) options.height = size.rows;
  return options;
}

// What the landlock backend cannot hold that the namespace lockbox does (stackie-lockbox(1)
// BACKENDS), said once per `up`.
const char kLandlockWeaker[] =
    "blocks run under the landlock sandbox (this host denies the namespace lockbox; `stackie "
    "doctor` says why and how to lift it): they see the host's processes (but cannot signal or "
    "trace them), hostname, uid, account names and the names (not the contents) of files "
    "outside their paths, share the user's SysV IPC, may send UDP anywhere, and bind their "
    "served ports on every address of the host";

}  // namespace

int run_up(std::span<char*> argv) {
  ArgWalker args("up", argv);
  std::string file, project_name;
  Json named = Json::array(), profiles = Json::array();
  bool ephemeral = false, no_sandbox = false, detach = false, watch = false, wait = false;
  std::string color = "auto";
  while (!args.done()) {
    if (auto v = args.value("-f", "--file"))
      file = *v;
    else if (auto name = args.value("-p", "--project-name"))
      project_name = *name;
    else if (args.flag("", "--ephemeral"))
      ephemeral = true;
    else if (args.flag("", "--no-sandbox"))
      no_sandbox = true;
    else if (args.flag("-d", "--detach"))
      detach = true;
    else if (args.flag("", "--wait"))
      wait = true;
    else if (args.flag("", "--watch"))
      watch = true;
    else if (auto profile = args.value("", "--profile"))
      profiles.push_back(*profile);
    else if (!args.current().starts_with("-")) {
      named.push_back(std::string(args.current()));
      args.next();
    } else if (auto when = args.value("", "--color")) {
      color = *when;
      if (args.error.empty() && color != "auto" && color != "always" && color != "never")
        return usage_error("up", "--color is auto, always or never, not '" + color + "'");
    } else
      return usage_error("up", "unknown option '" + std::string(args.current()) + "'");
    if (!args.error.empty()) return usage_error("up", args.error);
  }
  if (detach && wait) return usage_error("up", "--detach and --wait exclude each other");
  if (watch && !watch_supported()) return watch_stack("", {});  // says why, before anything
  std::string error;
  auto path = absolute_stack_file(file, error);
  if (!path) {
    std::fprintf(stderr, "stackie: %s\n", error.c_str());
    return kExitFailed;
  }
  auto cwd = current_directory();
  if (!cwd.ok()) {
    std::fprintf(stderr, "stackie: %s\n", cwd.error().message.c_str());
    return kExitFailed;
  }
  ipc::ClientOptions options;
  options.idle_timeout = std::chrono::milliseconds(0);  // health waits are the daemon's
  auto connection = connect_or_start_daemon(options);
  if (!connection.client) return connection.exit_code;
  Json env = Json::object();
  for (const auto& [name, value] : current_environment()) env.set(name, value);
  const UpProgressView::Options view_opts = view_options(color);
  UpProgressView view(view_opts);
  // On a terminal without --detach (or --watch), `up` stays: the blocks' logs until Ctrl-C,
  // which stops the stack. Scripts and pipes keep the detached behaviour.
  std::optional<ForegroundUp> foreground;
  if (!detach && !wait && !watch && stdout_is_tty()) foreground.emplace(view_opts.color);
  const int64_t up_started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  std::string stack_name;
  std::vector<std::string> block_names;
  auto write_view = [&view] {
    std::string text = view.render(monotonic_ms());
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  auto on_event = [&](const ipc::Event& event) {
    if (event.name == "warning") {  // sent before "stack": ahead of any live line
      std::fprintf(stderr, "stackie: %s\n", event.data["message"].string_or("").c_str());
      return;
    }
    if (event.name == "stack") {
      view.plan(event.data["blocks"], monotonic_ms());
      stack_name = event.data["stack"].string_or("");
      block_names.clear();
      for (size_t i = 0; i < event.data["blocks"].size(); ++i)
        block_names.push_back(event.data["blocks"][i]["name"].string_or("?"));
    } else if (event.name == "progress")
      view.progress(event.data, monotonic_ms());
    else
      return;
    write_view();
  };
  // Live lines redraw their elapsed clocks between events too. In the foreground, Ctrl-C
  // while the stack starts gives up waiting (closing our end) and stops what began.
  auto on_tick = [&] {
    write_view();
    if (foreground && foreground->interrupted()) connection.client->close();
  };
  ipc::Client::Tick tick{std::chrono::milliseconds(view_opts.live || foreground ? 200 : 0),
                         on_tick};
  auto reply = connection.client->call("up",
                                       Json::object({{"file", *path},
                                                     {"cwd", *cwd},
                                                     {"env", env},
                                                     {"ephemeral", ephemeral},
                                                     {"no_sandbox", no_sandbox},
                                                     {"project_name", project_name},
                                                     {"blocks", named},
                                                     {"profiles", profiles},
                                                     {"wait", !detach}}),
                                       on_event, tick);
  if (view.live()) {  // the final states, clocks stopped
    std::string text = view.render(monotonic_ms(), true);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  if (foreground && foreground->interrupted())
    return foreground->stop(stack_name, *path, block_names);
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) {
    const auto& remote = reply->error();
    if (remote.code == "failed" && remote.data.is_object()) {
      // The daemon's message may already carry the log tail; print it only when it does not.
      // Both hold the block's own words: on a terminal they are shown as text.
      const bool on_terminal = ::isatty(STDERR_FILENO) == 1;
      auto shown = [on_terminal](const std::string& text) {
        return on_terminal ? terminal_safe_lines(text) : text;
      };
      std::fprintf(stderr, "stackie: %s\n", shown(remote.message).c_str());
      const auto& tail = remote.data["log_tail"];
      bool tail_in_message = tail.is_array() && tail.size() > 0 &&
                             remote.message.find(tail[0].string_or("")) != std::string::npos;
      if (tail.is_array() && !tail_in_message)
        for (const auto& line : tail.as_array())
          std::fprintf(stderr, "  | %s\n", shown(line.string_or("")).c_str());
      // A block that fails is what watching is for: the next good change brings it back.
      if (watch) return watch_stack(*path, {});
      return kExitFailed;
    }
    return report_remote_error(remote);
  }
  // Said once per block and per `up`, on stderr: running without isolation is a choice the
  // user must see (DESIGN.md §5: never silently without a sandbox).
  const auto& blocks = reply->result()["blocks"];
  bool landlock = false;
  if (blocks.is_array())
    for (const auto& row : blocks.as_array()) {
      if (row["sandbox"].string_or("") == "passthrough")
        std::fprintf(stderr, "stackie: warning: block %s runs without a sandbox\n",
                     row["name"].string_or("?").c_str());
      landlock = landlock || row["sandbox"].string_or("") == "linux-landlock";
    }
  if (landlock) std::fprintf(stderr, "stackie: warning: %s\n", kLandlockWeaker);
  print_moved_ports(blocks);
  std::printf("stack %s is up\n", reply->result()["stack"].string_or("?").c_str());
  print_endpoints(blocks);
  print_tasks(blocks);
  std::fflush(stdout);
  if (watch) return watch_stack(*path, {});
  if (foreground) {
    std::vector<std::string> names;
    for (size_t i = 0; i < blocks.size(); ++i) names.push_back(blocks[i]["name"].string_or("?"));
    return foreground->follow(*connection.client, reply->result()["stack"].string_or("?"), names,
                              up_started_ms);
  }
  return kExitOk;
}

namespace {

// `down BLOCK...` (or `down STACK`, which the daemon tells apart: a stack that is up by that
// name is the stack).
int down_blocks(const std::string& file, const std::vector<std::string>& names) {
  Json params = Json::object();
  Json list = Json::array();
  for (const auto& name : names) list.push_back(name);
  params.set("names", list);
  std::string error;
  if (!file.empty()) {
    auto path = absolute_stack_file(file, error);
    if (!path) {
      std::fprintf(stderr, "stackie: %s\n", error.c_str());
      return kExitFailed;
    }
    params.set("file", *path);
  } else if (auto path = absolute_stack_file("", error)) {
    params.set("hint_file", *path);
  }
  ipc::ClientOptions options;
  options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  auto reply = connection.client->call("down", params, print_progress);
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  const Json& result = reply->result();
  std::string stack = result["stack"].string_or("?");
  if (!result["stopped"].is_array() || result["stack_down"].bool_or(true)) {
    std::printf("stack %s is down\n", stack.c_str());
    return kExitOk;
  }
  for (const auto& block : result["stopped"].as_array())
    std::printf("%s/%s: stopped\n", stack.c_str(), block.string_or("?").c_str());
  return kExitOk;
}

}  // namespace

int run_down(std::span<char*> argv) {
  ArgWalker args("down", argv);
  StackTarget target;
  std::vector<std::string> names;
  bool volumes = false, yes = false;
  while (!args.done()) {
    if (args.flag("-v", "--volumes"))
      volumes = true;
    else if (args.flag("-y", "--yes"))
      yes = true;
    else if (auto v = args.value("-f", "--file"))
      target.file = *v;
    else if (!args.current().starts_with("-")) {
      names.emplace_back(args.current());
      args.next();
    } else
      return usage_error("down", "unknown option '" + std::string(args.current()) + "'");
    if (!args.error.empty()) return usage_error("down", args.error);
  }
  if (names.size() > 1 && volumes)
    return usage_error("down", "-v removes a whole stack's volumes: not with BLOCK names");
  if (names.size() == 1 && target.file.empty()) {
    // STACK (as always) or one BLOCK: the daemon tells which (a stack that is up wins).
    if (volumes) target.stack = names.front(), names.clear();
  }
  if (!names.empty()) return down_blocks(target.file, names);
  std::string error;
  auto params = stack_target_params(target, /*cwd_default=*/true, error);
  if (!params) {
    std::fprintf(stderr, "stackie: %s\n", error.c_str());
    return kExitFailed;
  }
  if (volumes) {
    std::string what = !target.stack.empty() ? "stack " + target.stack
                                             : "the stack of " + (*params)["file"].string_or("?");
    if (!yes && !confirm("Remove every volume of " + what + " (its data, for good)?"))
      return kExitFailed;
    params->set("volumes", true);
  }
  ipc::ClientOptions options;
  options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  auto reply = connection.client->call("down", *params, print_progress);
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  std::printf("stack %s is down\n", reply->result()["stack"].string_or("?").c_str());
  const Json& removed = reply->result()["volumes"];
  if (removed.is_object())
    std::printf("removed its volumes: %s (%s)\n", removed["path"].string_or("?").c_str(),
                format_bytes(static_cast<uint64_t>(removed["bytes"].int_or(0))).c_str());
  return kExitOk;
}

}  // namespace stackie::cli
