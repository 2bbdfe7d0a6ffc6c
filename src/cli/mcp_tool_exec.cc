// exec_in_sandbox: a command inside a running block, run by the daemon (`exec.run`,
// supervisor/exec_capture.h) with its output captured: never on this server's own stdin and
// stdout, which carry the protocol.
#include <string>

#include "cli/mcp_tools.h"

namespace stackie::cli::mcp {

namespace {

constexpr int64_t kMostTimeoutS = 300;  // the daemon's limit, published in the schema

std::string stream_text(const char* name, const Json& stream) {
  const std::string& kept = stream["text"].string_or("");
  std::string text = std::string("--- ") + name;
  if (stream["truncated"].bool_or(false))
    text += " (truncated: first " + std::to_string(kept.size()) + " of " +
            std::to_string(stream["bytes"].int_or(0)) + " bytes)";
  text += " ---\n" + kept;
  if (!kept.empty() && kept.back() != '\n') text += "\n";
  return text;
}

ToolAnswer exec_in_sandbox(DaemonLink& daemon, const Json& arguments) {
  Json params = block_params(arguments);
  params.set("argv", arguments["argv"]);
  if (arguments["timeout_s"].is_int()) params.set("timeout_s", arguments["timeout_s"]);
  auto run = daemon.call("exec.run", params);
  if (!run.ok()) return tool_error("exec: " + run.error().message);
  const Json& result = *run;
  bool timed_out = result["timed_out"].bool_or(false);
  std::string text;
  if (timed_out)
    text = "timed out after " + std::to_string(result["timeout_s"].int_or(0)) + " s (killed)";
  else if (result["signal"].is_int())
    text = "killed by signal " + std::to_string(result["signal"].as_int());
  else
    text = "exit status " + std::to_string(result["exit_code"].int_or(-1));
  // 127 from the launcher: the command could not be run at all (stackie-lockbox(1)).
  if (!timed_out && result["exit_code"].int_or(0) == 127)
    text += " (command not found in the sandbox?)";
  text += "\n" + stream_text("stdout", result["stdout"]) + stream_text("stderr", result["stderr"]);
  // A command that ran and failed is an answer, not a failed call; one killed for its time is.
  return ToolAnswer{std::move(text), result, timed_out};
}

}  // namespace

std::vector<Tool> exec_tools() {
  Json properties = block_properties();
  properties.set("argv",
                 Json::object({{"type", "array"},
                               {"items", Json::object({{"type", "string"}, {"maxLength", 65536}})},
                               {"minItems", 1},
                               {"maxItems", 1024},
                               {"description",
                                "the command and its arguments, no shell (use "
                                "[\"sh\",\"-c\",\"...\"] for one)"}}));
  properties.set("timeout_s",
                 Json::object({{"type", "integer"},
                               {"minimum", 1},
                               {"maximum", kMostTimeoutS},
                               {"description", "seconds before it is killed (default 30)"}}));
  return {Tool{"exec_in_sandbox", "Run a command in a sandbox",
               "Run a command inside a running block's sandbox (its namespaces, policy, "
               "environment and working directory), stdin empty. Answers the exit status and "
               "stdout and stderr, each cut at 64 KiB (the cut is reported).",
               object_schema(std::move(properties), {"sandbox", "argv"}), false, true,
               exec_in_sandbox}};
}

}  // namespace stackie::cli::mcp
