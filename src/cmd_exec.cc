// `stackie exec BLOCK -- CMD [ARG...]`: asks the daemon where the block runs, then becomes
// `stackie-lockbox --join PID -- CMD` (or CMD itself for a passthrough block) so that CMD
// keeps the caller's terminal and its exit status is ours.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "cli_daemon.h"
#include "cmd.h"

namespace stackie::cli {

extern const char kExecUsage[] =
    "Usage: stackie exec BLOCK -- CMD [ARG...]\n"
    "\n"
    "Run CMD inside the sandbox of a running block (its namespaces and policy), attached to\n"
    "this terminal, in the block's working directory with its environment (and TERM). Secret\n"
    "variables are left out (named on stderr): a program that needs one asks for it. A\n"
    "passthrough (--no-sandbox) block runs CMD directly.\n"
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
  auto reply = connection.client->call("exec", ipc::Json::object({{"block", block}}));
  if (!reply.ok()) return report_transport_error(reply.error());
  if (!reply->ok()) return report_remote_error(reply->error());
  connection.client->close();
  const auto& r = reply->result();
  // CMD sees what the block sees: its environment (secrets excepted, see below), its working
  // directory, and the caller's TERM so that interactive programs draw properly.
  std::vector<std::pair<std::string, std::string>> env;
  if (r["env"].is_array())
    for (const auto& pair : r["env"].as_array())
      env.emplace_back(pair[0].string_or(""), pair[1].string_or(""));
  if (const char* term = std::getenv("TERM"); term != nullptr) env.emplace_back("TERM", term);
  std::string cwd = r["cwd"].string_or("");
  if (r["secrets"].is_array() && r["secrets"].size() > 0) {
    std::string names;
    for (const auto& name : r["secrets"].as_array()) names += " " + name.string_or("");
    std::fprintf(stderr, "stackie: exec: the block's secret variables are not passed:%s\n",
                 names.c_str());
  }
  std::vector<std::string> words;
  if (r["lockbox"].is_string()) {
    words = {r["lockbox"].as_string(), "--join", std::to_string(r["join_pid"].int_or(0))};
    for (const auto& [name, value] : env) words.insert(words.end(), {"--setenv", name, value});
    if (!cwd.empty()) words.insert(words.end(), {"--chdir", cwd});
    words.emplace_back("--");
  } else {
    // A block without a sandbox: CMD runs here, in the caller's environment plus the block's.
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      std::fprintf(stderr, "stackie: exec: cannot enter %s: %s\n", cwd.c_str(),
                   std::strerror(errno));
  }
  for (size_t i = cmd_at; i < argv.size(); ++i) words.emplace_back(argv[i]);
  std::vector<char*> exec_argv;
  for (auto& w : words) exec_argv.push_back(w.data());
  exec_argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(exec_argv[0], exec_argv.data());
  std::fprintf(stderr, "stackie: exec %s: %s\n", exec_argv[0], std::strerror(errno));
  return 127;
}

}  // namespace stackie::cli
