// `exec.run` (stackie-ipc(7)): a command inside a running block, run by the daemon with its
// output captured (exec_capture.h) and answered as one JSON result. For clients with no
// terminal to hand the block: the HTTP API's POST /api/blocks/{block}/exec and the MCP
// server's exec_in_sandbox. `stackie exec` keeps `exec`, which only says how to join, so that
// the user's terminal is relayed by the CLI and never held by the daemon.
#include <chrono>

#include "supervisor/daemon_handlers.h"
#include "supervisor/exec_capture.h"

namespace stackie {

namespace errc = ipc::errc;
using ipc::Session;

namespace {

constexpr size_t kMostExecRuns = 16;  // at once; each holds a process and two pipes
constexpr size_t kMostWords = 1024;
constexpr size_t kMostWordBytes = 64 * 1024;

Result<std::vector<std::string>> command_words(const Json& argv) {
  if (!argv.is_array() || argv.as_array().empty() || argv.as_array().size() > kMostWords)
    return Error{UV_EINVAL, "\"argv\" must be an array of 1 to 1024 strings"};
  std::vector<std::string> words;
  for (const Json& word : argv.as_array()) {
    if (!word.is_string() || word.as_string().size() > kMostWordBytes)
      return Error{UV_EINVAL, "\"argv\" must hold strings of at most 64 KiB"};
    words.push_back(word.as_string());
  }
  return words;
}

}  // namespace

void DaemonHandlers::exec_run(Session session, const Json& params) {
  auto target = resolve_block(params);
  if (!target.ok()) return session.fail(code_for(target.error()), target.error().message);
  auto words = command_words(params["argv"]);
  if (!words.ok()) return session.fail(errc::kInvalidParams, words.error().message);
  const Json& timeout_s = params["timeout_s"];
  if (!timeout_s.is_null() && (!timeout_s.is_int() || timeout_s.as_int() < 1 ||
                               timeout_s.as_int() > kExecCaptureMostTimeout.count()))
    return session.fail(errc::kInvalidParams, "\"timeout_s\" must be 1..300");
  if (*exec_runs_ >= kMostExecRuns)
    return session.fail(errc::kBusy, "16 commands are running in blocks already; try again");

  const StackRunner* stack = daemon_.supervisor().stack(target->stack);
  const BlockRunner* runner = nullptr;
  if (stack != nullptr)
    for (const BlockRunner* candidate : stack->blocks())
      if (candidate->spec().name == target->block) runner = candidate;
  if (runner == nullptr) return session.fail(errc::kNotFound, "no block " + target->block);

  // The block's own environment and (inside its sandbox) working directory, as `exec` gives
  // the CLI; the values reach the joined command through the launcher's environment only.
  CaptureRequest request;
  std::vector<std::string> names;
  for (const auto& [name, value] : runner->spec().policy.environment) {
    names.push_back(name);
    request.env.push_back(name + "=" + value);
  }
  request.argv = runner->join_argv(*words, names);
  if (request.argv.empty())
    return session.fail(errc::kFailed, "block " + target->block + " is " +
                                           std::string(to_string(runner->state())) +
                                           ", not running");
  // A passthrough block's command runs as itself, in the block's directory; a joined one
  // starts in the block's own working directory inside.
  if (request.argv == *words) request.cwd = runner->spec().policy.working_dir;
  request.timeout = std::chrono::seconds(timeout_s.int_or(kExecCaptureDefaultTimeout.count()));

  ++*exec_runs_;
  auto timeout = request.timeout;
  run_exec_capture(daemon_.supervisor().loop(), request,
                   [runs = exec_runs_, session, timeout](Result<CapturedExit> exit) mutable {
                     --*runs;
                     if (!exit.ok()) return session.fail(errc::kFailed, exit.error().message);
                     session.reply(captured_exit_json(*exit, timeout, kExecCaptureCap));
                   });
}

}  // namespace stackie
