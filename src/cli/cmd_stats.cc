// `stackie stats`: what each block uses now (docker stats habits): CPU %, memory, processes,
// storage I/O, uptime, redrawn every interval until interrupted, or once with --no-stream.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"

namespace stackie::cli {

extern const char kStatsUsage[] =
    "Usage: stackie stats [-p STACK] [BLOCK|STACK/BLOCK...] [--no-stream] [--json]\n"
    "\n"
    "Show each block's CPU %, memory, process count, storage I/O and uptime, refreshed every\n"
    "second until interrupted (every block of every stack when none is named). The daemon\n"
    "samples only while someone asks.\n"
    "\n"
    "Options:\n"
    "  -p, --project STACK  only the blocks of STACK\n"
    "      --no-stream      one sample (over one second) and exit\n"
    "      --json           the daemon's document ({\"v\":1,\"blocks\":[...]}, stackie-ipc(7)),\n"
    "                       one per line when streaming\n"
    "\n"
    "Exit status: 0, 1 no such block, 2 usage error, 3 no daemon.\n";

namespace {

std::string bytes_text(const Json& value) {
  if (!value.is_int()) return "-";
  double bytes = static_cast<double>(value.as_int());
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f%s" : "%.1f%s", bytes, units[unit]);
  return text;
}

std::string uptime_text(const Json& value) {
  if (!value.is_int()) return "-";
  int64_t s = value.as_int();
  char text[32];
  if (s < 60)
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(s));
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  else
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  return text;
}

std::string table(const Json& document) {
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "STATE", "CPU %", "MEM", "PSS", "PIDS", "READ / WRITE", "UPTIME"}};
  const Json& blocks = document["blocks"];
  std::vector<std::string> stacks;
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::string stack = blocks[i]["stack"].string_or("");
    if (std::find(stacks.begin(), stacks.end(), stack) == stacks.end()) stacks.push_back(stack);
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Json& b = blocks[i];
    std::string name = b["name"].string_or("?");
    if (stacks.size() > 1) name = b["stack"].string_or("?") + "/" + name;
    char cpu[16] = "-";
    if (b["cpu_percent"].is_number())
      std::snprintf(cpu, sizeof cpu, "%.1f%%", b["cpu_percent"].as_double());
    rows.push_back({name, b["state"].string_or("?"), cpu, bytes_text(b["memory_bytes"]),
                    bytes_text(b["pss_bytes"]),
                    b["pids"].is_int() ? std::to_string(b["pids"].as_int()) : "-",
                    bytes_text(b["read_bytes"]) + " / " + bytes_text(b["write_bytes"]),
                    uptime_text(b["uptime_s"])});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace

int run_stats(std::span<char*> argv) {
  ArgWalker args("stats", argv);
  bool stream = true, json = false;
  std::string project;
  Json blocks = Json::array();
  while (!args.done()) {
    if (auto p = args.value("-p", "--project")) {
      project = *p;
      if (args.error.empty() && project.empty()) return usage_error("stats", "-p needs a STACK");
    } else if (args.flag("", "--no-stream"))
      stream = false;
    else if (args.flag("", "--json"))
      json = true;
    else if (args.current().starts_with("-"))
      return usage_error("stats", "unknown option '" + std::string(args.current()) + "'");
    else {
      blocks.push_back(std::string(args.current()));
      args.next();
    }
    if (!args.error.empty()) return usage_error("stats", args.error);
  }
  Json params = Json::object({{"blocks", blocks}, {"follow", stream}, {"interval_ms", 1000}});
  if (!project.empty()) params.set("stack", project);
  ipc::ClientOptions options;
  if (stream) options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  bool redraw = stream && !json && stdout_is_tty();
  auto show = [&](const Json& document) {
    std::string out = json ? to_json_line(document) : table(document);
    if (redraw) out = "\033[H\033[2J" + out;  // home, clear: a live view like `docker stats`
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  };
  auto reply = connection.client->call("stats", params, [&](const ipc::Event& event) {
    if (event.name == "stats") show(event.data);
  });
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  show(reply->result());
  return kExitOk;
}

}  // namespace stackie::cli
