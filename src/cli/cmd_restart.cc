// `stackie restart|stop|start BLOCK`: one block through the daemon.
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"

namespace stackie::cli {

extern const char kRestartUsage[] =
    "Usage: stackie restart [--no-wait] BLOCK...\n\n"
    "Stop then start each block (BLOCK or STACK/BLOCK), one after the other, and wait until it\n"
    "runs (and is healthy when it has a health check), fails, or is stopped by someone else.\n"
    "\nOptions:\n  --no-wait   return once the daemon took the request\n"
    "\nExit status: 0 running again, 1 failed, stopped or no such block, 2 usage error,\n"
    "3 no daemon.\n";
extern const char kStopUsage[] =
    "Usage: stackie stop [--no-wait] BLOCK...\n\n"
    "Stop each block and wait until it is stopped; it stays stopped until start, restart or up.\n"
    "\nOptions:\n  --no-wait   return once the daemon took the request\n"
    "\nExit status: 0 stopped, 1 no such block, 2 usage error, 3 no daemon.\n";
extern const char kStartUsage[] =
    "Usage: stackie start [--no-wait] BLOCK...\n\n"
    "Start each stopped block again and wait until it runs (and is healthy when it has a health\n"
    "check), fails, or is stopped by someone else. A block that is stopping starts once its\n"
    "stop is over.\n"
    "\nOptions:\n  --no-wait   return once the daemon took the request\n"
    "\nExit status: 0 running, 1 failed, stopped or no such block, 2 usage error, 3 no daemon.\n";

namespace {

int block_action_one(ipc::Client& client, const char* verb, const std::string& block, bool wait);

int block_action(const char* verb, std::span<char*> argv) {
  ArgWalker args(verb, argv);
  std::vector<std::string> blocks;
  bool wait = true;
  while (!args.done()) {
    if (args.flag("", "--no-wait")) {
      wait = false;
      continue;
    }
    if (args.current().starts_with("-"))
      return usage_error(verb, "unknown option '" + std::string(args.current()) + "'");
    blocks.emplace_back(args.current());
    args.next();
  }
  if (blocks.empty()) return usage_error(verb, "missing BLOCK");
  ipc::ClientOptions options;
  options.idle_timeout = std::chrono::milliseconds(0);
  auto connection = connect_daemon(options);
  if (!connection.client) return connection.exit_code;
  // One after the other, stopping at the first that fails: its message is the answer.
  for (const auto& block : blocks)
    if (int status = block_action_one(*connection.client, verb, block, wait); status != kExitOk)
      return status;
  return kExitOk;
}

int block_action_one(ipc::Client& client, const char* verb, const std::string& block, bool wait) {
  auto reply = client.call(verb, Json::object({{"block", block}, {"wait", wait}}),
                           [](const ipc::Event& event) {
                             if (event.name != "progress") return;
                             std::printf("%s: %s\n", event.data["block"].string_or("?").c_str(),
                                         event.data["state"].string_or("?").c_str());
                             std::fflush(stdout);
                           });
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  const auto& row = reply->result()["block"];
  std::printf("%s: %s\n", row["name"].string_or(block).c_str(),
              row["state"].string_or("?").c_str());
  return kExitOk;
}

}  // namespace

int run_restart(std::span<char*> argv) {
  return block_action("restart", argv);
}
int run_stop(std::span<char*> argv) {
  return block_action("stop", argv);
}
int run_start(std::span<char*> argv) {
  return block_action("start", argv);
}

}  // namespace stackie::cli
