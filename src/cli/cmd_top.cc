// `stackie top` (and `stackie ui`): one stack live on the terminal. One connection to the
// daemon carries three followers (stats every second, every block's log lines, the stack's
// lifecycle events, which trigger a fresh `ps`) and the actions the keys ask for; poll() waits
// on it, the keyboard and the signal pipe together. The daemon samples stats only while a
// `stats` request runs, so it pays nothing once the UI is gone.
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/fs_path.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/top_model.h"
#include "cli/top_terminal.h"
#include "cli/top_view.h"

extern char** environ;  // POSIX names it; no standard header declares it

namespace stackie::cli {

extern const char kTopUsage[] =
    "Usage: stackie top [-f FILE | STACK]\n"
    "       stackie ui [-f FILE | STACK]\n"
    "\n"
    "Show a stack live on this terminal: every block with its state, health, pid, restarts,\n"
    "CPU, memory, uptime and ports, and below them the blocks' log lines as they come (all of\n"
    "them interleaved, or the selected block's). Without FILE or STACK: the stack of the stack\n"
    "file in the current directory when it is up, else the only stack up.\n"
    "\n"
    "Keys: up/down (k/j) select a block; a or Enter switches the log pane between every block\n"
    "and the selected one; r restarts, x stops, s starts the selected block; e runs a shell\n"
    "in it (stackie exec BLOCK -- sh; exit the shell to come back); / filters the log lines\n"
    "(Enter applies, Esc clears); PgUp/PgDn scroll back, End follows again; q or Ctrl-C quit.\n"
    "\n"
    "Needs a terminal on stdin and stdout (`stackie ps`, `stats` and `logs -f` print the same\n"
    "without one) of at least 50x10; NO_COLOR turns colours off. The daemon samples CPU and\n"
    "memory only while a top (or stats) runs.\n"
    "\n"
    "Exit status: 0 quit with q or Ctrl-C, 1 no such stack or no terminal, 2 usage error,\n"
    "3 no daemon or the daemon went away, 128+N ended by signal N (SIGTERM, SIGHUP).\n";

namespace {

// Where the stack to show comes from: a name, a file, the cwd's file, or the only stack up.
Result<std::string> resolve_stack(ipc::Client& client, const StackTarget& target) {
  std::string error;
  std::optional<Json> params;
  if (!target.stack.empty() || !target.file.empty()) {
    params = stack_target_params(target, false, error);
    if (!params) return Error{UV_EINVAL, error};
  } else if (auto cwd = stack_target_params(target, true, error)) {
    params = *cwd;  // tried first; the only stack up otherwise
  }
  auto ps = [&client](const Json& p) -> Result<ipc::Reply> { return client.call("ps", p); };
  STACKIE_TRY_ASSIGN(reply, ps(params ? *params : Json::object()));
  bool cwd_guess = params && target.stack.empty() && target.file.empty();
  if (!reply.ok() && cwd_guess && reply.error().code == "not_found") {
    STACKIE_TRY_ASSIGN(all, ps(Json::object()));
    reply = std::move(all);
  }
  if (!reply.ok()) return Error{UV_ENOENT, reply.error().message};
  std::set<std::string> stacks;
  const Json& rows = reply.result()["blocks"];
  for (size_t i = 0; i < rows.size(); ++i) stacks.insert(rows[i]["stack"].string_or("?"));
  if (stacks.empty()) return Error{UV_ENOENT, "no stack is up (stackie up starts one)"};
  if (stacks.size() > 1) {
    std::string names;
    for (const auto& s : stacks) names += (names.empty() ? "" : ", ") + s;
    return Error{UV_EINVAL, "several stacks are up (" + names + "): name one, stackie top STACK"};
  }
  return *stacks.begin();
}

class TopSession {
 public:
  TopSession(ipc::Client client, const std::string& stack, bool color)
      : client_(std::move(client)), model_(stack) {
    options_.color = color;
  }

  int run() {
    Json stack = model_.stack();
    auto follow = [&](const char* method, Json params) -> bool {
      auto id = client_.send(method, std::move(params));
      if (id.ok()) followers_[*id] = method;
      return id.ok();
    };
    if (!follow("stats",
                Json::object({{"stack", stack}, {"follow", true}, {"interval_ms", 1000}})) ||
        !follow("logs", Json::object({{"stack", stack}, {"tail", 200}, {"follow", true}})) ||
        !follow("events",
                Json::object({{"follow", true}, {"filters", Json::object({{"stack", stack}})}})))
      return gone("the daemon closed the connection");
    refresh_ps();
    if (auto entered = terminal_.enter(); !entered.ok()) {
      std::fprintf(stderr, "stackie: top: %s\n", entered.error().message.c_str());
      return kExitFailed;
    }
    draw();
    while (!quit_) {
      pollfd fds[] = {
          {STDIN_FILENO, POLLIN, 0}, {client_.fd(), POLLIN, 0}, {signals_.fd(), POLLIN, 0}};
      int ready = ::poll(fds, 3, 1000);
      if (ready < 0 && errno != EINTR) break;
      if (fds[2].revents != 0) on_signals();
      if (fds[0].revents & (POLLIN | POLLHUP)) on_input();
      if (fds[1].revents != 0 && !quit_) {
        auto status = on_daemon();
        if (!status.ok()) return gone(status.error().message);
      }
      if (!quit_) draw();
    }
    terminal_.leave();
    return exit_code_;
  }

 private:
  int gone(const std::string& why) {
    terminal_.leave();
    std::fprintf(stderr, "stackie: top: %s\n", why.c_str());
    return kExitDaemonUnreachable;
  }

  void draw() {
    TopSize size = RawTerminal::size();
    write_terminal(screen_.update(top_layout(model_, size, options_)));
  }

  // A `ps` after each event of the stack; one at a time, the next asked for while one runs.
  void refresh_ps() {
    if (ps_id_) {
      ps_again_ = true;
      return;
    }
    auto id = client_.send("ps", Json::object({{"stack", model_.stack()}}));
    if (id.ok()) ps_id_ = *id;
  }

  // The daemon's messages that have arrived: read until none is left in the client's buffer.
  Status on_daemon() {
    do {
      auto message = client_.read_message(std::chrono::milliseconds(1));
      if (!message.ok() && message.error().code == UV_ETIMEDOUT) return {};  // half a line
      if (!message.ok()) return message.take_error();
      if (auto* event = std::get_if<ipc::Event>(&*message))
        on_event(*event);
      else
        on_reply(std::get<ipc::Reply>(*message));
    } while (client_.buffered());
    return {};
  }

  void on_event(const ipc::Event& event) {
    auto follower = followers_.find(event.id);
    if (follower == followers_.end()) return;
    if (event.name == "stats")
      model_.apply_stats(event.data);
    else if (event.name == "line")
      model_.add_log(event.data);
    else if (event.name == "skipped" && follower->second == "logs")
      model_.add_skipped(event.data["count"].int_or(0));
    else if (event.name == "event")
      refresh_ps();
  }

  void on_reply(const ipc::Reply& reply) {
    if (!reply.id) return;
    if (reply.id == ps_id_) {
      ps_id_.reset();
      if (reply.ok()) {
        model_.apply_ps(reply.result());
      } else {  // the stack went down meanwhile: say so, keep showing its logs
        model_.apply_ps(Json::object({{"blocks", Json::array()}}));
        model_.set_status(reply.error().message);
      }
      if (ps_again_) {
        ps_again_ = false;
        refresh_ps();
      }
      return;
    }
    if (auto follower = followers_.find(*reply.id); follower != followers_.end()) {
      // A follower ends when the daemon refuses it, or (logs) when the stack went down.
      if (!reply.ok())
        model_.set_status(follower->second + ": " + reply.error().message);
      else if (follower->second == "logs")
        model_.set_status("stack " + model_.stack() + " is down");
      followers_.erase(follower);
      return;
    }
    if (auto action = actions_.find(*reply.id); action != actions_.end()) {
      model_.set_status(reply.ok() ? action->second + ": done"
                                   : action->second + ": " + reply.error().message);
      actions_.erase(action);
      refresh_ps();
    }
  }

  void act(const char* method, const char* doing) {
    const TopBlock* block = model_.selected();
    if (block == nullptr) return;
    std::string name = block->name;
    auto id = client_.send(
        method, Json::object({{"stack", model_.stack()}, {"block", name}, {"wait", false}}));
    if (!id.ok()) return;  // the read side reports the closed connection
    actions_[*id] = std::string(doing) + " " + name;
    model_.set_status(std::string(doing) + " " + name + "...");
  }

  void on_signals() {
    for (int signum : signals_.drain()) {
      if (signum == SIGWINCH) {
        screen_.invalidate();
        continue;
      }
      quit_ = true;
      exit_code_ = 128 + signum;
    }
  }

  void on_input() {
    char buffer[256];
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {  // the terminal is gone
      quit_ = true;
      exit_code_ = 128 + SIGHUP;
      return;
    }
    if (n < 0) return;
    for (const KeyPress& key : decode_keys(std::string_view(buffer, static_cast<size_t>(n)))) {
      if (quit_) return;
      if (options_.editing_filter)
        edit_filter(key);
      else
        command(key);
    }
  }

  void edit_filter(const KeyPress& key) {
    std::string& draft = options_.filter_draft;
    switch (key.key) {
      case Key::enter:
        model_.set_filter(draft);
        options_.editing_filter = false;
        break;
      case Key::escape:
        model_.set_filter("");
        options_.editing_filter = false;
        break;
      case Key::backspace:  // one character: its UTF-8 continuation bytes with it
        while (!draft.empty() && (static_cast<unsigned char>(draft.back()) & 0xC0) == 0x80)
          draft.pop_back();
        if (!draft.empty()) draft.pop_back();
        break;
      case Key::interrupt: quit_ = true; break;
      case Key::character:
        if (draft.size() < 200) draft += key.ch;
        break;
      default: break;
    }
  }

  void command(const KeyPress& key) {
    model_.set_status("");
    const int page = std::max(RawTerminal::size().height / 2, 1);
    switch (key.key) {
      case Key::up: model_.move_selection(-1); return;
      case Key::down: model_.move_selection(1); return;
      case Key::page_up: model_.scroll_by(page); return;
      case Key::page_down: model_.scroll_by(-page); return;
      case Key::end: model_.scroll_by(-static_cast<long>(model_.scroll())); return;
      case Key::home: model_.scroll_by(static_cast<long>(TopModel::kMaxLogLines)); return;
      case Key::enter: model_.toggle_follow_all(); return;
      case Key::interrupt: quit_ = true; return;
      case Key::character: break;
      default: return;
    }
    switch (key.ch) {
      case 'q': quit_ = true; break;
      case 'k': model_.move_selection(-1); break;
      case 'j': model_.move_selection(1); break;
      case 'a': model_.toggle_follow_all(); break;
      case 'r': act("restart", "restarting"); break;
      case 'x': act("stop", "stopping"); break;
      case 's': act("start", "starting"); break;
      case 'e': shell(); break;
      case '/':
        options_.editing_filter = true;
        options_.filter_draft = model_.filter();
        break;
      default: break;
    }
  }

  // Leaves the UI for `stackie exec BLOCK -- sh` on the real terminal, and comes back when the
  // shell exits. Our handlers stay in place (a child's exec resets them to the defaults):
  // Ctrl-C typed in the shell reaches us too, and is not a reason to quit.
  void shell() {
    const TopBlock* block = model_.selected();
    if (block == nullptr) return;
    std::string target = model_.stack() + "/" + block->name;
    terminal_.leave();
    std::printf("stackie top: a shell in %s; exit it to come back\n", target.c_str());
    std::fflush(stdout);
    std::string self = join_path(executable_dir(), "stackie");
    std::vector<std::string> words = {"stackie", "exec", target, "--", "sh"};
    std::vector<char*> args;
    for (auto& w : words) args.push_back(w.data());
    args.push_back(nullptr);
    pid_t child = -1;
    int status = 0;
    if (posix_spawn(&child, self.c_str(), nullptr, nullptr, args.data(), environ) == 0)
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
    else
      std::fprintf(stderr, "stackie top: cannot run %s\n", self.c_str());
    for (int signum : signals_.drain())
      if (signum == SIGTERM || signum == SIGHUP) quit_ = true, exit_code_ = 128 + signum;
    if (auto entered = terminal_.enter(); !entered.ok()) {
      quit_ = true;
      exit_code_ = kExitFailed;
      return;
    }
    screen_.invalidate();
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    model_.set_status("shell in " + target + " exited with " + std::to_string(code));
  }

  ipc::Client client_;
  TopModel model_;
  TopViewOptions options_;
  RawTerminal terminal_;
  SignalPipe signals_;
  ScreenDiff screen_;
  std::map<ipc::RequestId, std::string> followers_;  // id -> method
  std::map<ipc::RequestId, std::string> actions_;    // id -> "restarting app"
  std::optional<ipc::RequestId> ps_id_;
  bool ps_again_ = false;
  bool quit_ = false;
  int exit_code_ = kExitOk;
};

}  // namespace

int run_top(std::span<char*> argv) {
  std::string verb = argv.empty() ? "top" : argv[0];
  ArgWalker args(verb, argv);
  StackTarget target;
  while (!args.done()) {
    if (!take_stack_target(args, target))
      return usage_error(verb, "unknown option '" + std::string(args.current()) + "'");
    if (!args.error.empty()) return usage_error(verb, args.error);
  }
  const char* term = std::getenv("TERM");
  if (!::isatty(STDIN_FILENO) || !stdout_is_tty() ||
      (term != nullptr && std::string_view(term) == "dumb")) {
    std::fprintf(stderr,
                 "stackie: %s needs a terminal (stdin and stdout, TERM not dumb); stackie ps, "
                 "stats and logs -f print the same without one\n",
                 verb.c_str());
    return kExitFailed;
  }
  ipc::ClientOptions options;
  options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  auto stack = resolve_stack(*connection.client, target);
  if (!stack.ok()) {
    if (stack.error().code == UV_EOF) return report_transport_error(stack.error());
    std::fprintf(stderr, "stackie: %s: %s\n", verb.c_str(), stack.error().message.c_str());
    return kExitFailed;
  }
  bool color = std::getenv("NO_COLOR") == nullptr;  // no-color.org, as stackie logs
  TopSession session(std::move(*connection.client), *stack, color);
  return session.run();
}

}  // namespace stackie::cli
