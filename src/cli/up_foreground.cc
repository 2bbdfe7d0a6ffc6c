#include "cli/up_foreground.h"

#include <uv.h>

#include <algorithm>
#include <cstdio>

#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/terminal_text.h"

namespace stackie::cli {

namespace {

constexpr std::chrono::milliseconds kPollSignals{200};
// More than any block's in-memory ring holds: every line since `since`.
constexpr long long kEveryLine = 1'000'000;

}  // namespace

bool ForegroundUp::interrupted() {
  for (int signum : signals_.drain())
    if (is_stopping_signal(signum) && signal_ == 0) signal_ = signum;
  return signal_ != 0;
}

void ForegroundUp::print_line(const Json& line) {
  print_text(line["block"].string_or("?"), line["text"].string_or(""));
}

void ForegroundUp::print_text(const std::string& name, std::string_view text) {
  static const char* kColors[] = {"36", "33", "32", "35", "34", "31"};  // as stackie logs
  auto known = std::find(colored_.begin(), colored_.end(), name);
  size_t slot = static_cast<size_t>(known - colored_.begin());
  if (known == colored_.end()) colored_.push_back(name);
  // The block wrote this text: it reaches the terminal without its control characters.
  std::string out;
  if (color_) out += std::string("\033[") + kColors[slot % 6] + "m";
  std::string shown = terminal_safe(name);
  if (shown.size() < name_width_) shown.append(name_width_ - shown.size(), ' ');  // aligned
  out += shown + " |";
  if (color_) out += "\033[0m";
  out += " " + terminal_safe(std::string(text)) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void ForegroundUp::on_files_event(const ipc::Event& event) {
  if (!files_) return;
  if (event.name == "files") {
    const LogFileStart out = log_file_start(event.data["stdout"]);
    const LogFileStart err = log_file_start(event.data["stderr"]);
    const std::string block = event.data["block"].string_or("?");
    if (auto added = files_->add(event.data["stack"].string_or(""), block,
                                 event.data["directory"].string_or(""), &out, &err);
        !added.ok())
      std::fprintf(stderr, "stackie: cannot follow the log files of %s: %s\n", block.c_str(),
                   added.error().message.c_str());
  } else if (event.name == "files_failed") {
    files_->finish(event.data["stack"].string_or(""), event.data["block"].string_or(""),
                   file_records(), file_notes());
    return;
  }
  more_in_files_ = !drain_files();
}

bool ForegroundUp::drain_files() {
  return !files_ || files_->drain(file_records(), file_notes());
}

LogFileFollow::Records ForegroundUp::file_records() {
  return
      [this](const std::string&, const std::string& block, std::string_view, std::string_view got) {
        for (size_t start = 0; start < got.size();) {
          size_t end = got.find('\n', start);
          if (end == std::string_view::npos) end = got.size();
          const std::string_view record = got.substr(start, end - start);
          const size_t space = record.find(' ');
          print_text(block, space == std::string_view::npos ? record : record.substr(space + 1));
          start = end + 1;
        }
      };
}

LogFileFollow::Note ForegroundUp::file_notes() {
  return [this](const std::string&, const std::string& block, const std::string& note) {
    print_text(block, note);
  };
}

int ForegroundUp::follow(ipc::Client& client, const std::string& stack,
                         const std::vector<std::string>& blocks, int64_t since_ms) {
  Json params = Json::object({{"stack", stack},
                              {"since", static_cast<long long>(since_ms)},
                              {"tail", kEveryLine},
                              {"follow", true}});
  if (LogFileFollow::supported()) {
    if (auto made = LogFileFollow::create(); made.ok()) {
      files_ = std::move(*made);
      params.set("files", true);
    }
  }
  auto logs = client.send("logs", params);
  if (!logs.ok()) return report_transport_error(logs.error());
  for (const auto& block : blocks) name_width_ = std::max(name_width_, block.size());
  std::printf("following the logs of every block; Ctrl-C stops the stack\n");
  std::fflush(stdout);
  while (!interrupted()) {
    if (files_ && !client.buffered()) {
      auto ready =
          files_->wait(client.fd(), more_in_files_ ? 0 : static_cast<int>(kPollSignals.count()));
      if (!ready.ok()) return report_transport_error(ready.error());
      if (ready->files || more_in_files_) more_in_files_ = !drain_files();
      if (!ready->other) continue;
    }
    auto message = client.read_message(files_ ? std::chrono::milliseconds(0) : kPollSignals);
    if (!message.ok() && message.error().code == UV_ETIMEDOUT) continue;
    if (!message.ok()) return report_transport_error(message.error());
    if (auto* event = std::get_if<ipc::Event>(&*message)) {
      if (event->id == *logs && event->name == "line") print_line(event->data);
      if (event->id == *logs && (event->name == "files" || event->name == "files_failed"))
        on_files_event(*event);
      if (event->id == *logs && event->name == "skipped")
        std::fprintf(stderr, "stackie: %lld lines skipped (slow terminal)\n",
                     static_cast<long long>(event->data["count"].int_or(0)));
      continue;
    }
    auto& reply = std::get<ipc::Reply>(*message);
    if (reply.id != *logs) continue;
    while (!drain_files()) {  // what was written before the stack went away
    }
    // The daemon ends a follower of a stack that went down: a `stackie down` elsewhere.
    if (!reply.ok()) return report_remote_error(reply.error());
    std::printf("stack %s is down\n", stack.c_str());
    return kExitOk;
  }
  return stop_on(client, Json::object({{"stack", stack}}), blocks, *logs);
}

int ForegroundUp::stop(const std::string& stack, const std::string& file,
                       const std::vector<std::string>& blocks) {
  ipc::ClientOptions options;
  options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  Json target = stack.empty() ? Json::object({{"file", file}}) : Json::object({{"stack", stack}});
  return stop_on(*connection.client, target, blocks, std::nullopt);
}

int ForegroundUp::stop_on(ipc::Client& client, Json target, const std::vector<std::string>& blocks,
                          std::optional<ipc::RequestId> logs_id) {
  std::string stack = target["stack"].string_or(target["file"].string_or("?"));
  std::fprintf(stderr, "stackie: stopping stack %s (Ctrl-C again to kill its blocks)\n",
               stack.c_str());
  auto down = client.send("down", target);
  if (!down.ok()) return report_transport_error(down.error());
  bool forced = false;
  for (;;) {
    for (int signum : signals_.drain()) {
      if (!is_stopping_signal(signum) || forced) continue;
      // Compose's second Ctrl-C: no more waiting for graceful stops. The `down` still runs
      // and returns once the killed blocks are reaped.
      forced = true;
      std::fprintf(stderr, "stackie: killing the blocks of %s\n", stack.c_str());
      for (const auto& block : blocks) {
        Json kill = target;
        kill.set("block", block);
        kill.set("signal", "SIGKILL");
        if (auto sent = client.send("kill", kill); !sent.ok())
          return report_transport_error(sent.error());
      }
    }
    auto message = client.read_message(kPollSignals);
    if (!message.ok() && message.error().code == UV_ETIMEDOUT) continue;
    if (!message.ok()) return report_transport_error(message.error());
    if (auto* event = std::get_if<ipc::Event>(&*message)) {
      if (logs_id && event->id == *logs_id && event->name == "line") print_line(event->data);
      if (event->id == *down && event->name == "progress")
        std::printf("%s: %s\n", event->data["block"].string_or("?").c_str(),
                    event->data["state"].string_or("?").c_str());
      std::fflush(stdout);
      continue;
    }
    auto& reply = std::get<ipc::Reply>(*message);
    if (reply.id != *down) continue;  // the logs follower ending, the kills' answers
    while (!drain_files()) {          // the blocks' last lines, written while they stopped
    }
    if (!reply.ok()) return report_remote_error(reply.error());
    std::printf("stack %s is down\n", reply.result()["stack"].string_or(stack).c_str());
    std::fflush(stdout);
    return 128 + signal_;
  }
}

}  // namespace stackie::cli
