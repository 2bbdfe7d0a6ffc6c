// macOS only. Kept tiny on purpose: everything that can be tested lives in seatbelt_profile.cc.
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
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

namespace {

std::string resolved(const std::string& path) {
  if (path.empty() || path[0] != '/') return path;
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) != nullptr) return buffer;
  // Not there yet: resolve the longest existing parent, keep the rest as written.
  size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string::npos) return path;
  return resolved(path.substr(0, slash)) + path.substr(slash);
}

}  // namespace

SandboxPolicy seatbelt_resolve_paths(SandboxPolicy policy) {
  for (auto* binds : {&policy.read_only, &policy.read_write})
    for (auto& bind : *binds) bind.source = resolved(bind.source);
  if (!policy.host_tmp_dir.empty()) policy.host_tmp_dir = resolved(policy.host_tmp_dir);
  return policy;
}

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
