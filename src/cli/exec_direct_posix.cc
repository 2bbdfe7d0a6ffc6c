#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/exec_relay.h"

extern char** environ;  // POSIX names it; no standard header declares it

namespace stackie::cli {

int run_directly(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 bool keep_env, const std::string& cwd) {
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
    std::fprintf(stderr, "stackie: exec: cannot enter %s: %s\n", cwd.c_str(), std::strerror(errno));
  std::vector<std::string> words = argv;
  std::vector<char*> exec_argv;
  for (auto& w : words) exec_argv.push_back(w.data());
  exec_argv.push_back(nullptr);
  std::vector<std::string> entries = env;
  std::vector<char*> block_envp;
  if (!keep_env) {
    for (auto& entry : entries) block_envp.push_back(entry.data());
    block_envp.push_back(nullptr);
    environ = block_envp.data();
  }
  execvp(exec_argv[0], exec_argv.data());
  std::fprintf(stderr, "stackie: exec %s: %s\n", exec_argv[0], std::strerror(errno));
  return 127;
}

}  // namespace stackie::cli
