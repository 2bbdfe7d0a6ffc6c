// macOS only. Kept tiny on purpose: everything that can be tested lives in seatbelt_profile.cc.
#include <sandbox.h>  // sandbox_init, sandbox_free_error: deprecated but the only public API
#include <unistd.h>

#include <cerrno>

#include "sandbox/seatbelt_apply.h"
#include "sandbox/seatbelt_profile.h"

namespace stackie {

Status seatbelt_apply_and_exec(const SandboxPolicy& policy, const std::vector<std::string>& argv) {
  if (argv.empty()) return Error{0, "no command to run"};
  const std::string profile = seatbelt_profile(policy);

  std::vector<std::string> env_strings;
  for (const auto& [name, value] : policy.environment) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  // Already a session leader (e.g. spawned detached) is fine: the daemon kills our group.
  if (setsid() < 0 && getsid(0) != getpid()) return system_error(errno, "setsid");
  char* failure = nullptr;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const int entered = sandbox_init(profile.c_str(), 0, &failure);
  if (entered != 0) {
    std::string message = "sandbox_init: " + std::string(failure ? failure : "unknown error");
    sandbox_free_error(failure);
    return Error{0, message};
  }
#pragma GCC diagnostic pop
  const std::string& dir = policy.working_dir.empty() ? std::string("/") : policy.working_dir;
  if (chdir(dir.c_str()) != 0) return system_error(errno, "chdir " + dir);
  execve(args[0], args.data(), envp.data());
  return system_error(errno, "exec " + argv[0]);
}

}  // namespace stackie
