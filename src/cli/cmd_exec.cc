// `stackie exec BLOCK -- CMD [ARG...]`: asks the daemon where the block runs, then runs
// `stackie-lockbox --join PID -- CMD` on a pty of its own (or pipes) and relays it
// (exec_relay.h): the caller's terminal, fds and cwd never enter the sandbox. A passthrough
// block has no sandbox to keep out: CMD runs on the caller's terminal (run_directly: on POSIX we
// become CMD itself).
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/exec_plan.h"
#include "cli/exec_relay.h"

namespace stackie::cli {

extern const char kExecUsage[] =
    "Usage: stackie exec BLOCK -- CMD [ARG...]\n"
    "\n"
    "Run CMD inside the sandbox of a running block (its namespaces and policy), in the block's\n"
    "working directory with the block's environment (not this shell's; the caller's TERM is\n"
    "added). CMD gets a terminal of its own when stdin is one (relayed to this one, which is\n"
    "in raw mode meanwhile; its size follows), pipes otherwise: nothing of this terminal\n"
    "enters the sandbox. Signals to stackie are forwarded to CMD. A passthrough (--no-sandbox)\n"
    "block runs CMD directly.\n"
    "\n"
    "Exit status: CMD's; 1 the block is not running, 2 usage error, 3 no daemon, 127 CMD not\n"
    "found.\n";

int run_exec(std::span<char*> argv) {
  if (argv.size() < 2 || std::string_view(argv[1]).starts_with("-"))
    return usage_error("exec", "missing BLOCK");
  std::string block = argv[1];
  size_t cmd_at = 2;
  if (cmd_at < argv.size() && std::string_view(argv[cmd_at]) == "--") ++cmd_at;
  if (cmd_at >= argv.size()) return usage_error("exec", "missing CMD after --");
  auto connection = connect_daemon();
  if (!connection.client) return connection.exit_code;
  auto reply = connection.client->call("exec", Json::object({{"block", block}}));
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  connection.client->close();
  const auto& r = reply->result();
  // The block's environment, plus the caller's TERM (an interactive psql or redis-cli edits
  // lines with it) unless the block sets its own; and the block's working directory.
  Json environment = r["environment"];
  if (const char* term = std::getenv("TERM");
      term && environment.is_object() && !environment.contains("TERM"))
    environment.set("TERM", term);
  auto planned = exec_plan(r, environment);
  if (!planned.ok()) {
    std::fprintf(stderr, "stackie: exec: %s\n", planned.error().message.c_str());
    return kExitFailed;
  }
  ExecPlan& plan = *planned;
  std::vector<std::string> words = plan.prefix;
  for (size_t i = cmd_at; i < argv.size(); ++i) words.emplace_back(argv[i]);
  // CMD gets the block's environment, not the caller's (a passthrough block's CMD too, and its
  // PATH is the block's when execvp searches).
  std::vector<std::string>& block_env = plan.env;
  std::fflush(stdout);
  if (plan.sandboxed()) {
    auto status = run_relayed(words, block_env);
    if (!status.ok()) {
      std::fprintf(stderr, "stackie: exec: %s\n", status.error().message.c_str());
      return 127;
    }
    return *status;
  }
  return run_directly(words, block_env, !environment.is_object(), plan.cwd);
}

}  // namespace stackie::cli
