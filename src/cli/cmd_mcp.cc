// `stackie mcp serve --stdio`: an MCP server (mcp_rpc.h) for tools and AI agents, on stdin and
// stdout, that reaches the daemon through the user's socket as every verb does.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "base/version.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/mcp_daemon_link.h"
#include "cli/mcp_resources.h"
#include "cli/mcp_rpc.h"
#include "cli/mcp_tools.h"
#include "cli/mcp_transport.h"

namespace stackie::cli {

extern const char kMcpUsage[] =
    "Usage: stackie mcp serve --stdio\n"
    "\n"
    "Serve the Model Context Protocol (revision 2025-11-25; JSON-RPC 2.0, one message a line)\n"
    "on stdin and stdout, for an AI agent or tool that starts this command: tools to list,\n"
    "inspect, start, stop and restart blocks, read and search their logs, run commands in\n"
    "their sandboxes and check their health; each block's log as the resource\n"
    "stackie://STACK/BLOCK/logs. It talks to the user's daemon (not started for it).\n"
    "Diagnostics go to stderr.\n"
    "\n"
    "Exit status: 0 at the end of input, 1 when stdout fails, 2 usage error.\n";

namespace {

class StackieBackend final : public mcp::Backend {
 public:
  StackieBackend() : tools_(mcp::all_tools()) {}
  Json list_tools() override { return mcp::describe_tools(tools_); }
  std::optional<Json> call_tool(std::string_view name, const Json& arguments) override {
    return mcp::run_tool(tools_, daemon_, name, arguments);
  }
  mcp::RpcOutcome list_resources() override { return mcp::list_log_resources(daemon_); }
  Json list_resource_templates() override { return mcp::log_resource_templates(); }
  mcp::RpcOutcome read_resource(std::string_view uri) override {
    return mcp::read_log_resource(daemon_, uri);
  }

 private:
  std::vector<mcp::Tool> tools_;
  mcp::SocketDaemonLink daemon_;
};

}  // namespace

int run_mcp(std::span<char*> argv) {
  if (argv.size() < 2) return usage_error("mcp", "missing 'serve'");
  if (std::string_view(argv[1]) != "serve")
    return usage_error("mcp", "unknown subcommand '" + std::string(argv[1]) + "'");
  bool stdio = false;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (std::string_view(argv[i]) == "--stdio")
      stdio = true;
    else
      return usage_error("mcp", "unknown option '" + std::string(argv[i]) + "'");
  }
  if (!stdio) return usage_error("mcp", "serve needs --stdio (the only transport)");
  // A client that goes away mid-answer is a failed write, not a death by SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  StackieBackend backend;
  mcp::RpcServer server(backend, std::string(version()));
  return mcp::serve_lines(
      STDIN_FILENO, STDOUT_FILENO, [&](std::string_view line) { return server.handle_line(line); },
      [&] { return server.oversized_reply(); });
}

}  // namespace stackie::cli
