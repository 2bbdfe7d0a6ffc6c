// macOS only. Kept tiny on purpose: everything that can be tested lives in seatbelt_profile.cc.
#include <stdint.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/seatbelt_apply.h"
#include "sandbox/seatbelt_profile.h"

// sandbox_init is deprecated but still the only public way to enter a profile given as text
// (browsers use it the same way). Declared by hand: the header is missing from some SDKs and
// from zig's bundled macOS headers; the symbol is in libSystem on every macOS since 10.5.
extern "C" {
int sandbox_init(const char* profile, uint64_t flags, char** errorbuf);
void sandbox_free_error(char* errorbuf);
}

namespace stackie {

Status seatbelt_apply_and_exec(const SandboxPolicy& policy, const std::string& program,
                               const std::vector<std::string>& argv) {
  if (argv.empty()) return Error{0, "no command to run"};
  const std::string profile = seatbelt_profile(policy);

  std::vector<std::string> env_strings;
  for (const auto& [name, value] : policy.environment) env_strings.push_back(name + "=" + value);
  env_strings.push_back("STACKIE_IPC_PREFIX=/" + seatbelt_ipc_prefix(policy.name));
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  char* failure = nullptr;
  if (sandbox_init(profile.c_str(), 0, &failure) != 0) {
    std::string message = "sandbox_init: " + std::string(failure ? failure : "unknown error");
    if (failure != nullptr) sandbox_free_error(failure);
    return Error{0, message};
  }
  const std::string& dir = policy.working_dir.empty() ? std::string("/") : policy.working_dir;
  if (chdir(dir.c_str()) != 0) return system_error(errno, "chdir " + dir);
  execve(program.c_str(), args.data(), envp.data());
  return system_error(errno, "exec " + program);
}

}  // namespace stackie
