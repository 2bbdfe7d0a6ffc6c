// exec_in_sandbox: a command inside a running block, joined as `stackie exec` joins it
// (exec_plan.h), its output captured (mcp_exec_capture.h) instead of relayed.
#include <chrono>
#include <string>
#include <vector>

#include "cli/exec_plan.h"
#include "cli/mcp_exec_capture.h"
#include "cli/mcp_tools.h"

namespace stackie::cli::mcp {

namespace {

constexpr int64_t kDefaultTimeoutS = 30;
constexpr int64_t kMostTimeoutS = 300;

Json stream_json(const CapturedStream& stream) {
  return Json::object({{"text", stream.kept},
                       {"bytes", static_cast<int64_t>(stream.bytes)},
                       {"truncated", stream.truncated()}});
}

std::string stream_text(const char* name, const CapturedStream& stream) {
  std::string text = std::string("--- ") + name;
  if (stream.truncated())
    text += " (truncated: first " + std::to_string(stream.kept.size()) + " of " +
            std::to_string(stream.bytes) + " bytes)";
  text += " ---\n" + stream.kept;
  if (!stream.kept.empty() && stream.kept.back() != '\n') text += "\n";
  return text;
}

ToolAnswer exec_in_sandbox(DaemonLink& daemon, const Json& arguments) {
  auto reply = daemon.call("exec", block_params(arguments));
  if (!reply.ok()) return tool_error("exec: " + reply.error().message);
  ExecPlan plan = exec_plan(*reply, (*reply)["environment"]);
  std::vector<std::string> words = plan.prefix;
  for (const Json& word : arguments["argv"].as_array()) words.push_back(word.as_string());
  auto timeout = std::chrono::seconds(arguments["timeout_s"].int_or(kDefaultTimeoutS));
  auto run =
      run_captured(words, plan.env, plan.sandboxed() ? "" : plan.cwd, !plan.sandboxed(), timeout);
  if (!run.ok()) return tool_error("exec: " + run.error().message);
  Json structured =
      Json::object({{"exit_code", run->exit_code >= 0 ? Json(run->exit_code) : Json()},
                    {"signal", run->signal != 0 ? Json(run->signal) : Json()},
                    {"timed_out", run->timed_out},
                    {"timeout_s", static_cast<int64_t>(timeout.count())},
                    {"stdout", stream_json(run->out)},
                    {"stderr", stream_json(run->err)},
                    {"output_cap_bytes", static_cast<int64_t>(kExecOutputCap)}});
  std::string text;
  if (run->timed_out)
    text = "timed out after " + std::to_string(timeout.count()) + " s (killed)";
  else if (run->signal != 0)
    text = "killed by signal " + std::to_string(run->signal);
  else
    text = "exit status " + std::to_string(run->exit_code);
  // 125-127 from the launcher: the command could not be run at all (stackie-lockbox(1)).
  if (!run->timed_out && plan.sandboxed() && run->exit_code == 127)
    text += " (command not found in the sandbox?)";
  text += "\n" + stream_text("stdout", run->out) + stream_text("stderr", run->err);
  // A command that ran and failed is an answer, not a failed call; one killed for its time is.
  return ToolAnswer{std::move(text), std::move(structured), run->timed_out};
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
