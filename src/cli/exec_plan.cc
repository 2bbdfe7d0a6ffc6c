#include "cli/exec_plan.h"

namespace stackie::cli {

Result<ExecPlan> exec_plan(const Json& reply, const Json& environment) {
  ExecPlan plan;
  plan.cwd = reply["cwd"].string_or("");
  plan.passthrough = reply["sandbox"].string_or("") == "passthrough";
  if (plan.passthrough) {
    // CMD runs directly: no launcher words.
  } else if (reply["launcher"].is_array()) {
    // The daemon's own words (Windows: no --join there, CMD gets a monitor of its own, with a
    // token planned from the block's policy); they pass every name of `environment` already.
    for (const Json& word : reply["launcher"].as_array()) plan.prefix.push_back(word.string_or(""));
    if (plan.prefix.size() < 2 || plan.prefix.back() != "--")
      return Error{0,
                   "the daemon's way into the block's sandbox is malformed; refusing to run "
                   "the command outside it"};
  } else if (reply["lockbox"].is_string()) {
    plan.prefix = {reply["lockbox"].as_string(), "--join",
                   std::to_string(reply["join_pid"].int_or(0))};
    // Names only on the command line: the values travel in the launcher's environment.
    if (environment.is_object())
      for (const auto& [name, value] : environment.as_object()) {
        plan.prefix.emplace_back("--pass-env");
        plan.prefix.push_back(name);
      }
    if (!plan.cwd.empty()) plan.prefix.insert(plan.prefix.end(), {"--chdir", plan.cwd});
    // The lockbox checks it joins this sandbox: the pid may have been recycled meanwhile.
    if (std::string id = reply["sandbox_id"].string_or(""); !id.empty())
      plan.prefix.insert(plan.prefix.end(), {"--name", id});
    plan.prefix.emplace_back("--");
  } else {
    return Error{0,
                 "the daemon gave no way into the block's sandbox; refusing to run the "
                 "command outside it"};
  }
  if (environment.is_object())
    for (const auto& [name, value] : environment.as_object())
      plan.env.push_back(name + "=" + value.string_or(""));
  return plan;
}

}  // namespace stackie::cli
