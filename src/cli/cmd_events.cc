// `stackie events`: the daemon's lifecycle events of blocks (docker/compose `events` habits):
// the history since a time, then every new one as it happens.
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cli_time.h"
#include "cli/cmd.h"

namespace stackie::cli {

extern const char kEventsUsage[] =
    "Usage: stackie events [--since TIME] [--no-follow] [--json] [-f KEY=VALUE...]\n"
    "\n"
    "Print the blocks' lifecycle events (create, init, start, health_status, kill, die, stop,\n"
    "restart, destroy, port) as they happen, until interrupted. With --since, the ones the\n"
    "daemon still holds (its last 1000) from TIME on come first.\n"
    "\n"
    "Options:\n"
    "      --since TIME      also the past events from TIME on: a duration ago (30s, 5m, 1h)\n"
    "                        or a time (2026-12-02T10:00:00Z, 2026-12-02 10:00 local)\n"
    "      --no-follow       print the past events (every one held, without --since) and exit\n"
    "  -f, --filter K=V      only events with stack=, block= (NAME or STACK/NAME), event=\n"
    "                        (an action) or sandbox_id=; repeat a key for either value\n"
    "      --json            one EVENT object per line (stackie-ipc(7))\n"
    "\n"
    "Exit status: 0, 1 the daemon refused, 2 usage error, 3 no daemon.\n";

namespace {

// "key=value, ..." of the details, as `docker events` prints attributes.
std::string attributes(const Json& event) {
  std::string out;
  auto add = [&out](const std::string& key, const Json& value) {
    if (!out.empty()) out += ", ";
    out += key + "=";
    out += value.is_string() ? value.as_string() : to_json(value);
  };
  if (event["details"].is_object())
    for (const auto& [key, value] : event["details"].as_object()) add(key, value);
  add("sandbox_id", event["sandbox_id"]);
  return out;
}

}  // namespace

int run_events(std::span<char*> argv) {
  ArgWalker args("events", argv);
  std::optional<int64_t> since_ms;
  bool follow = true, json = false;
  Json filters = Json::object();
  while (!args.done()) {
    if (auto since = args.value("", "--since")) {
      auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
      since_ms = parse_since(*since, now);
      if (args.error.empty() && !since_ms)
        return usage_error("events",
                           "--since needs a duration (5m, 2h) or a time, not '" + *since + "'");
    } else if (auto filter = args.value("-f", "--filter")) {
      if (!args.error.empty()) break;
      auto eq = filter->find('=');
      std::string key = eq == std::string::npos ? "" : filter->substr(0, eq);
      if (key != "stack" && key != "block" && key != "event" && key != "sandbox_id")
        return usage_error("events",
                           "-f needs stack=, block=, event= or sandbox_id=, not '" + *filter + "'");
      Json values = filters[key].is_array() ? filters[key] : Json::array();
      values.push_back(filter->substr(eq + 1));
      filters.set(key, values);
    } else if (args.flag("", "--no-follow"))
      follow = false;
    else if (args.flag("", "--json"))
      json = true;
    else
      return usage_error("events", "unknown argument '" + std::string(args.current()) + "'");
    if (!args.error.empty()) return usage_error("events", args.error);
  }
  if (!args.error.empty()) return usage_error("events", args.error);
  Json params = Json::object({{"follow", follow}, {"filters", filters}});
  if (since_ms) params.set("since", static_cast<long long>(*since_ms));
  ipc::ClientOptions options;
  if (follow) options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  auto reply = connection.client->call("events", params, [&](const ipc::Event& event) {
    if (event.name == "skipped") {
      std::fprintf(stderr, "stackie: %lld events skipped (slow reader)\n",
                   static_cast<long long>(event.data["count"].int_or(0)));
      return;
    }
    if (event.name != "event") return;
    std::string line;
    if (json) {
      line = to_json_line(event.data);
    } else {
      const Json& e = event.data;
      line = e["time"].string_or("?") + " " + e["action"].string_or("?") + " " +
             e["stack"].string_or("?") + "/" + e["block"].string_or("?") + " (" + attributes(e) +
             ")\n";
    }
    std::fwrite(line.data(), 1, line.size(), stdout);
    if (follow) std::fflush(stdout);
  });
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  return kExitOk;
}

}  // namespace stackie::cli
