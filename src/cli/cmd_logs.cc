// `stackie logs`: the daemon's log lines of one or several blocks, optionally followed.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/log_level.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cli_time.h"
#include "cli/cmd.h"
#include "cli/log_file_follow.h"
#include "cli/log_text_event.h"
#include "cli/terminal_text.h"

namespace stackie::cli {

extern const char kLogsUsage[] =
    "Usage: stackie logs [-p STACK] [BLOCK|STACK/BLOCK...] [-f] [-n N] [--since TIME] [-t]\n"
    "                    [--stdout|--stderr] [--level LEVEL] [--json] [--color=auto|always|never]\n"
    "\n"
    "Print the last lines of the blocks' logs (all blocks of the stack when none is named).\n"
    "Lines are prefixed 'name |' when several blocks are shown, each block in a stable colour.\n"
    "\n"
    "Options:\n"
    "  -p, --project STACK   the stack (needed when several are up and no BLOCK names one)\n"
    "  -f, --follow          keep printing new lines until interrupted or the stack goes away\n"
    "  -n, --tail N          lines per block before following (default 10; with --since,\n"
    "                        every line the daemon still holds)\n"
    "      --since TIME      only lines from TIME on: a duration ago (30s, 5m, 1h30m, 1d) or\n"
    "                        a time (2026-12-02T10:00:00Z, 2026-12-02 10:00 local, 2026-12-02)\n"
    "  -t, --timestamps      prefix each line with its RFC 3339 UTC time\n"
    "      --stdout, --stderr  only that stream (stackie's own notes go with stderr)\n"
    "      --level LEVEL     only lines announcing LEVEL or worse: debug, info, warn, error,\n"
    "                        fatal (read from the line: postgres, redis, JSON and most logs)\n"
    "      --json            one JSON object a line: {stack, block, stream, ts, level, text}\n"
    "      --color WHEN      auto (a tty and no NO_COLOR), always, never\n"
    "\n"
    "Exit status: 0, 1 no such block, 2 usage error, 3 no daemon.\n";

namespace {
// More than any block's in-memory ring holds (stackied(8): 2000 lines).
constexpr long long kEveryLine = 1'000'000;
}  // namespace

int run_logs(std::span<char*> argv) {
  ArgWalker args("logs", argv);
  std::vector<std::string> blocks;
  bool follow = false, timestamps = false, json = false;
  std::string level;
  long long tail = 10;
  bool tail_given = false;
  std::optional<int64_t> since_ms;
  std::string color = "auto";
  std::string project;
  Json streams = Json::array();
  while (!args.done()) {
    if (auto p = args.value("-p", "--project")) {
      project = *p;
      if (args.error.empty() && project.empty()) return usage_error("logs", "-p needs a STACK");
    } else if (args.flag("-f", "--follow"))
      follow = true;
    else if (args.flag("-t", "--timestamps"))
      timestamps = true;
    else if (args.flag("", "--json"))
      json = true;
    else if (auto l = args.value("", "--level")) {
      level = *l;
      if (args.error.empty() && !parse_log_level(level))
        return usage_error("logs",
                           "--level is debug, info, warn, error or fatal, not '" + level + "'");
    } else if (args.flag("", "--stdout"))
      streams.push_back("stdout");
    else if (args.flag("", "--stderr"))
      streams.push_back("stderr");
    else if (auto v = args.value("-n", "--tail")) {
      tail_given = true;
      char* end = nullptr;
      tail = std::strtoll(v->c_str(), &end, 10);
      if (args.error.empty() && (v->empty() || *end != '\0' || tail < 0))
        return usage_error("logs", "-n needs a number, not '" + *v + "'");
    } else if (auto since = args.value("", "--since")) {
      auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
      since_ms = parse_since(*since, now);
      if (args.error.empty() && !since_ms)
        return usage_error("logs",
                           "--since needs a duration (5m, 2h) or a time (2026-12-02T10:00:00Z, "
                           "2026-12-02 10:00, 2026-12-02), not '" +
                               *since + "'");
    } else if (auto when = args.value("", "--color")) {
      color = *when;
      if (args.error.empty() && color != "auto" && color != "always" && color != "never")
        return usage_error("logs", "--color is auto, always or never");
    } else if (args.current().starts_with("-"))
      return usage_error("logs", "unknown option '" + std::string(args.current()) + "'");
    else {
      blocks.emplace_back(args.current());
      args.next();
    }
    if (!args.error.empty()) return usage_error("logs", args.error);
  }
  // On a terminal a block's bytes are shown as text: a log line must not retitle, clear or
  // drive the terminal of whoever reads it. Into a pipe or a file they stay as written.
  const bool on_terminal = stdout_is_tty();
  auto shown = [on_terminal](const std::string& text) {
    return on_terminal ? terminal_safe(text) : text;
  };
  bool use_color =
      color == "always" || (color == "auto" && on_terminal && std::getenv("NO_COLOR") == nullptr);
  Json block_list = Json::array();
  for (const auto& b : blocks) block_list.push_back(b);
  Json params = Json::object({{"blocks", block_list}, {"tail", tail}, {"follow", follow}});
  if (!project.empty()) params.set("stack", project);
  if (streams.size() > 0) params.set("streams", streams);
  if (!level.empty()) params.set("level", level);
  // A follower takes the lines of each read as one `text` event (cli/log_text_event.h; a
  // daemon that does not know it sends a `line` event per line).
  if (follow) params.set("batch", "text");
  // Where it can, a follower reads the log files itself after the tail (cli/log_file_follow.h):
  // the daemon then does nothing per line for it.
  std::unique_ptr<LogFileFollow> files;
  if (follow && LogFileFollow::supported()) {
    if (auto made = LogFileFollow::create(); made.ok()) {
      files = std::move(*made);
      params.set("files", true);
    }
  }
  if (since_ms) {
    params.set("since", static_cast<long long>(*since_ms));
    // --since alone means every line from then on that the daemon still holds, not 10 of them.
    if (!tail_given) params.set("tail", kEveryLine);
  }
  ipc::ClientOptions options;
  if (follow) options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  // A stable colour per block: its position among the names seen.
  static const char* kColors[] = {"36", "33", "32", "35", "34", "31"};
  std::map<std::string, size_t> color_of;
  bool prefix = blocks.size() != 1;
  // Blocks of more than one stack: each line names its stack too.
  std::map<std::string, int> stacks_named;
  for (const auto& b : blocks)
    if (auto slash = b.find('/'); slash != std::string::npos) ++stacks_named[b.substr(0, slash)];
  bool with_stack = stacks_named.size() > 1;
  // Each log line becomes one line of output, gathered for the whole event and written once.
  auto add_line = [&](std::string& out, const std::string& stack, const std::string& block,
                      const std::string& stream, const std::string& ts, LogLevel announced,
                      std::string_view text) {
    if (json) {
      const std::string line = to_json(Json::object(
          {{"stack", stack},
           {"block", block},
           {"stream", stream},
           {"ts", ts},
           {"level",
            announced == LogLevel::unknown ? Json() : Json(std::string(to_string(announced)))},
           {"text", std::string(text)}}));
      // Valid JSON may still carry C1 controls and bidi overrides raw: escaped on a terminal.
      out += on_terminal ? terminal_safe_json(line) : line;
      out += '\n';
      return;
    }
    std::string name = shown(block);
    if (with_stack) name = shown(stack) + "/" + name;
    if (prefix) {
      auto [it, added] = color_of.emplace(name, color_of.size());
      (void)added;
      if (use_color) out += std::string("\033[") + kColors[it->second % 6] + "m";
      out += name + " |";
      if (use_color) out += "\033[0m";
      out += " ";
    }
    if (timestamps) out += ts + " ";
    out += on_terminal ? terminal_safe(std::string(text)) : std::string(text);
    out += '\n';
  };
  // A `text` event's lines as they came, when nothing is added to a line: the common `logs -f
  // > file` or `| grep` under a flood writes what it read (issue 25).
  const bool as_they_came = !json && !prefix && !timestamps && !on_terminal;
  std::string out;
  auto print = [&](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (follow) std::fflush(stdout);
  };
  auto print_text = [&](const LogText& batch) {
    if (as_they_came) return print(batch.text);
    out.clear();
    size_t line = 0;
    for (size_t start = 0; start < batch.text.size(); ++line) {
      size_t end = batch.text.find('\n', start);
      if (end == std::string::npos) end = batch.text.size();
      const LogLevel announced =
          line < batch.levels.size() ? level_of_letter(batch.levels[line]) : LogLevel::unknown;
      add_line(out, batch.stack, batch.block, batch.stream, batch.ts, announced,
               std::string_view(batch.text).substr(start, end - start));
      start = end + 1;
    }
    print(out);
  };
  LogText batch;  // reused from event to event
  auto take_text_event = [&](ipc::RequestId id, std::string_view line) {
    if (!decode_log_text_event(line, id, batch)) return false;
    print_text(batch);
    return true;
  };
  // A block whose files are followed here: from where the daemon's tail ended.
  auto follow_files = [&](const Json& data) -> Status {
    bool wants_out = true, wants_err = true;
    if (streams.size() > 0) {
      wants_out = wants_err = false;
      for (const auto& stream : streams.as_array()) {
        wants_out = wants_out || stream.string_or("") == "stdout";
        wants_err = wants_err || stream.string_or("") == "stderr";
      }
    }
    const LogFileStart out_start = log_file_start(data["stdout"]);
    const LogFileStart err_start = log_file_start(data["stderr"]);
    return files->add(data["stack"].string_or("?"), data["block"].string_or("?"),
                      data["directory"].string_or(""), wants_out ? &out_start : nullptr,
                      wants_err ? &err_start : nullptr);
  };
  // Records read from the files ("STAMP TEXT\n" each): printed as the daemon's lines would be,
  // the level filter applied here. Without a prefix, JSON or a terminal they go out as they are
  // (-t) or as their texts.
  const std::optional<LogLevel> min_level =
      level.empty() ? std::nullopt : std::optional<LogLevel>(parse_log_level(level));
  auto print_records = [&](const std::string& stack, const std::string& block,
                           std::string_view stream, std::string_view records) {
    const bool raw = !json && !prefix && !on_terminal && !min_level;
    if (raw && timestamps) return print(records);
    out.clear();
    for (size_t start = 0; start < records.size();) {
      size_t end = records.find('\n', start);
      if (end == std::string_view::npos) end = records.size();
      const std::string_view record = records.substr(start, end - start);
      start = end + 1;
      const size_t space = record.find(' ');
      const std::string_view text =
          space == std::string_view::npos ? record : record.substr(space + 1);
      if (raw) {
        out.append(text);
        out += '\n';
        continue;
      }
      const LogLevel announced = json || min_level ? classify_log_line(text) : LogLevel::unknown;
      if (min_level && (announced == LogLevel::unknown || announced < *min_level)) continue;
      // Read from a file: on a terminal, shown as text like the rest of the line.
      const std::string ts =
          shown(std::string(space == std::string_view::npos ? "" : record.substr(0, space)));
      add_line(out, stack, block, std::string(stream), ts, announced, text);
    }
    print(out);
  };
  auto note = [&](const std::string& stack, const std::string& block, const std::string& text) {
    std::fprintf(stderr, "stackie: %s%s%s: %s\n", with_stack ? stack.c_str() : "",
                 with_stack ? "/" : "", block.c_str(), text.c_str());
  };
  bool files_failed = false;
  bool more_in_files = false;  // the last drain stopped before the files' end
  const ipc::Client::EventHandler on_event = [&](const ipc::Event& event) {
    if (event.name == "files") {
      if (!files) return;
      if (auto added = follow_files(event.data); !added.ok()) {
        std::fprintf(stderr, "stackie: cannot follow the log files of %s: %s\n",
                     event.data["block"].string_or("?").c_str(), added.error().message.c_str());
        files_failed = true;
      }
      more_in_files = !files->drain(print_records, note);
      return;
    }
    // Its files were not written (a full disk, say): what they hold is read to its end, and
    // the daemon sends the lines from here on.
    if (event.name == "files_failed") {
      if (!files) return;
      files->finish(event.data["stack"].string_or(""), event.data["block"].string_or(""),
                    print_records, note);
      return;
    }
    // The daemon counts the events it skipped. A follower's event is a read's lines, and
    // how many lines it missed comes in the stream itself ("[stackie] N lines skipped").
    if (event.name == "skipped") {
      std::fprintf(stderr, "stackie: %lld %s skipped (slow reader)\n",
                   static_cast<long long>(event.data["count"].int_or(0)),
                   follow ? "batches of lines" : "lines");
      return;
    }
    // A `text` event the fast decoder did not take (written otherwise): the same lines.
    if (event.name == "text") {
      if (log_text_from_json(event.data, batch)) print_text(batch);
      return;
    }
    const Json& data = event.data;
    auto level_of = [](const Json& line) {
      return parse_log_level(line["level"].string_or("")).value_or(LogLevel::unknown);
    };
    out.clear();
    if (event.name == "line") {
      add_line(out, data["stack"].string_or("?"), data["block"].string_or("?"),
               data["stream"].string_or(""), data["ts"].string_or(""), level_of(data),
               data["text"].string_or(""));
    } else if (event.name == "lines" && data["lines"].is_array()) {
      for (const auto& line : data["lines"].as_array())
        add_line(out, data["stack"].string_or("?"), data["block"].string_or("?"),
                 data["stream"].string_or(""), data["ts"].string_or(""), level_of(line),
                 line["text"].string_or(""));
    } else {
      return;
    }
    print(out);
  };
  if (!files) {
    auto reply = connection.client->call("logs", params, on_event, take_text_event);
    if (!reply.ok()) return report_transport_error(reply.error());
    if (!reply->ok()) return report_remote_error(reply->error());
    return kExitOk;
  }
  // The daemon's messages (the tail, a `files` event per block, events of blocks followed the
  // other way) and the files, until the daemon ends the call (the stack went away).
  ipc::Client& client = *connection.client;
  auto id = client.send("logs", params);
  if (!id.ok()) return report_transport_error(id.error());
  for (;;) {
    if (files_failed) return kExitFailed;
    if (!client.buffered()) {
      auto ready = files->wait(client.fd(), more_in_files ? 0 : -1);
      if (!ready.ok()) return report_transport_error(ready.error());
      if (ready->files || more_in_files) more_in_files = !files->drain(print_records, note);
      if (!ready->other) continue;
    }
    auto message = client.read_message(std::chrono::milliseconds(0));
    if (!message.ok()) return report_transport_error(message.error());
    if (auto* event = std::get_if<ipc::Event>(&*message)) {
      if (event->id == *id) on_event(*event);
      continue;
    }
    const ipc::Reply& reply = std::get<ipc::Reply>(*message);
    if (reply.id != *id) continue;
    files->drain_to_end(print_records, note);  // what was written before the stack went away
    if (!reply.ok()) return report_remote_error(reply.error());
    return files_failed ? kExitFailed : kExitOk;
  }
}

}  // namespace stackie::cli
