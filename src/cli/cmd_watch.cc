// `stackie watch [-f FILE] [BLOCK...]` (and `stackie up --watch`): restart (or signal) each
// block that has `watch:` when its files change, until interrupted. The watching is the
// client's (it ends with the terminal and costs the daemon nothing); what it asks of the daemon
// is an ordinary `restart` (or `signal`) of the block.
#include <uv.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/uv_handle.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/file_watch.h"
#include "stack/block_def.h"
#include "stack/loader.h"

namespace stackie::cli {

extern const char kWatchUsage[] =
    "Usage: stackie watch [-f FILE] [BLOCK...]\n"
    "\n"
    "Watch the files of every block of the stack that is up and has `watch:` (or only the\n"
    "BLOCKs named) and, when they change, restart the block (or send it its watch signal),\n"
    "until interrupted (Ctrl-C). Changes are gathered until the files are quiet for the\n"
    "block's debounce (300ms by default). A restart that fails prints the block's error and\n"
    "the tail of its log; the next change tries again. `stackie up --watch` is `up`, then this.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  the stack file (default: the one in the current directory)\n"
    "\n"
    "Exit status: 0 interrupted, 1 nothing to watch or the stack is not up, 2 usage error,\n"
    "3 no daemon.\n";

namespace {

std::string clock_now() {
  std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", std::localtime(&now));
  return text;
}

std::string describe_paths(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) out += (i ? ", " : "") + paths[i];
  if (paths.size() > 3) out += " and " + std::to_string(paths.size() - 3) + " more";
  return out;
}

struct WatchedBlock {
  std::string target;  // STACK/BLOCK
  WatchSpec spec;
  std::unique_ptr<FileWatch> watch;
};

class WatchSession {
 public:
  WatchSession(uv_loop_t* loop, ipc::Client client) : loop_(loop), client_(std::move(client)) {}

  Status add(const std::string& stack, const ResolvedBlock& block) {
    auto watched = std::make_unique<WatchedBlock>();
    watched->target = stack + "/" + block.name;
    watched->spec = block.watch;
    WatchedBlock* self = watched.get();
    FileWatch::Changed changed = [this, self](std::vector<std::string> paths) {
      on_change(*self, paths);
    };
    FileWatch::Note note = [self](const std::string& text) {
      std::fprintf(stderr, "stackie: watch %s: %s\n", self->target.c_str(), text.c_str());
    };
    auto watch = FileWatch::start(loop_, block.watch, std::move(changed), std::move(note));
    if (!watch.ok()) return watch.take_error();
    watched->watch = std::move(*watch);
    std::printf("watching %s: %s (%zu directories)\n", watched->target.c_str(),
                block.watch.root.c_str(), watched->watch->directories());
    blocks_.push_back(std::move(watched));
    return {};
  }

 private:
  void on_change(WatchedBlock& block, const std::vector<std::string>& paths) {
    uint64_t first = block.watch->first_change_ms();
    std::printf("[%s] %s: %s changed; %s\n", clock_now().c_str(), block.target.c_str(),
                describe_paths(paths).c_str(),
                block.spec.action == WatchSpec::Action::restart ? "restarting" : "signalling");
    std::fflush(stdout);
    if (block.spec.action == WatchSpec::Action::signal) {
      auto reply = client_.call(
          "signal", Json::object({{"block", block.target}, {"signal", block.spec.signal}}));
      if (!reply.ok() || !reply->ok())
        std::printf("%s: the signal was not sent: %s\n", block.target.c_str(),
                    reply.ok() ? reply->error().message.c_str() : reply.error().message.c_str());
      else
        std::printf("%s: sent %s\n", block.target.c_str(),
                    stop_signal_name(block.spec.signal).c_str());
      std::fflush(stdout);
      return;
    }
    auto reply = client_.call("restart", Json::object({{"block", block.target}, {"wait", true}}));
    uv_update_time(loop_);
    uint64_t took = first != 0 ? uv_now(loop_) - first : 0;
    if (!reply.ok()) {
      std::printf("%s: restart: %s\n", block.target.c_str(), reply.error().message.c_str());
    } else if (!reply->ok()) {
      // The block's error and the tail of its log; the next change tries again.
      std::printf("%s: failed: %s\n", block.target.c_str(), reply->error().message.c_str());
      Json blocks = Json::array();
      blocks.push_back(block.target);
      auto tail = client_.call(
          "logs", Json::object({{"blocks", blocks}, {"tail", 10}}), [](const ipc::Event& event) {
            if (event.name == "line")
              std::printf("  | %s\n", event.data["text"].string_or("").c_str());
          });
      (void)tail;
      std::printf("%s: waiting for the next change\n", block.target.c_str());
    } else {
      std::printf("%s: running again, %llu ms after the change\n", block.target.c_str(),
                  static_cast<unsigned long long>(took));
    }
    std::fflush(stdout);
  }

  uv_loop_t* loop_;
  ipc::Client client_;
  std::vector<std::unique_ptr<WatchedBlock>> blocks_;
};

Result<ResolvedStack> load_for_watch(const std::string& file, const std::vector<std::string>& up) {
  LoadOptions options;
  options.file = file;
  STACKIE_TRY_ASSIGN(cwd, current_directory());
  options.cwd = cwd;
  options.env = current_environment();
  STACKIE_TRY_ASSIGN(settings, load_user_settings(options.env));
  options.settings = std::move(settings);
  options.running_blocks = [up](const std::string&) { return up; };
  return load_stack(options);
}

}  // namespace

bool watch_supported() {
  return true;
}

int watch_stack(const std::string& file, const std::vector<std::string>& only) {
  ipc::ClientOptions client_options;
  client_options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(client_options);
  if (!connection.client) return connection.exit_code;
  auto ps = connection.client->call("ps", Json::object({{"file", file}}));
  if (!ps.ok()) return report_transport_error(ps.error());
  if (!ps->ok()) return report_remote_error(ps->error());
  std::vector<std::string> up;
  std::string stack_name;
  const Json& rows = ps->result()["blocks"];
  for (const auto& row : rows.is_array() ? rows.as_array() : Json::Array{}) {
    up.push_back(row["name"].string_or(""));
    stack_name = row["stack"].string_or("");
  }
  auto stack = load_for_watch(file, up);
  if (!stack.ok()) {
    std::fprintf(stderr, "%s\n", stack.error().message.c_str());
    return kExitFailed;
  }
  for (const auto& name : only) {
    bool known = false;
    for (const auto& block : stack->blocks) known = known || block.name == name;
    if (!known) {
      std::fprintf(stderr, "stackie: watch: stack %s has no block %s that is up\n",
                   stack_name.c_str(), name.c_str());
      return kExitFailed;
    }
  }
  uv_loop_t loop;
  uv_loop_init(&loop);
  int status = kExitOk;
  {
    WatchSession session(&loop, std::move(*connection.client));
    size_t watched = 0;
    for (const auto& block : stack->blocks) {
      bool wanted = only.empty() || std::find(only.begin(), only.end(), block.name) != only.end();
      bool is_up = std::find(up.begin(), up.end(), block.name) != up.end();
      if (!wanted || !is_up || block.watch.root.empty()) continue;
      if (auto added = session.add(stack_name, block); !added.ok()) {
        std::fprintf(stderr, "stackie: watch: %s\n", added.error().message.c_str());
        status = kExitFailed;
        break;
      }
      ++watched;
    }
    if (status == kExitOk && watched == 0) {
      std::fprintf(stderr, "stackie: watch: no block of stack %s that is up has 'watch:'\n",
                   stack_name.c_str());
      status = kExitFailed;
    }
    if (status == kExitOk) {
      std::printf("watching; Ctrl-C to stop\n");
      std::fflush(stdout);
      std::vector<UvHandle<uv_signal_t>> signals;
      for (int signum : {SIGINT, SIGTERM, SIGHUP}) {
        UvHandle<uv_signal_t> handle;
        handle.init([&](uv_signal_t* h) { return uv_signal_init(&loop, h); }, &loop);
        uv_signal_start(
            handle.get(), [](uv_signal_t* h, int) { uv_stop(static_cast<uv_loop_t*>(h->data)); },
            signum);
        signals.push_back(std::move(handle));
      }
      uv_run(&loop, UV_RUN_DEFAULT);
    }
  }
  // Every handle of this loop has an owner (a UvHandle) that started its close when the session
  // and the signal handles went out of scope above; this run frees them in their close callbacks.
  uv_run(&loop, UV_RUN_DEFAULT);
  [[maybe_unused]] const int busy = uv_loop_close(&loop);
  assert(busy == 0 && "a libuv handle of the watch loop has no owner");
  return status;
}

int run_watch(std::span<char*> argv) {
  ArgWalker args("watch", argv);
  std::string file;
  std::vector<std::string> blocks;
  while (!args.done()) {
    if (auto v = args.value("-f", "--file")) {
      file = *v;
    } else if (!args.current().starts_with("-")) {
      blocks.emplace_back(args.current());
      args.next();
    } else {
      return usage_error("watch", "unknown option '" + std::string(args.current()) + "'");
    }
    if (!args.error.empty()) return usage_error("watch", args.error);
  }
  std::string error;
  auto path = absolute_stack_file(file, error);
  if (!path) {
    std::fprintf(stderr, "stackie: %s\n", error.c_str());
    return kExitFailed;
  }
  return watch_stack(*path, blocks);
}

}  // namespace stackie::cli
