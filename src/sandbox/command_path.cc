#include "sandbox/command_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace stackie {

int exec_failure_exit_code(int errnum) {
  return (errnum == ENOENT || errnum == ENOTDIR) ? 127 : 126;
}

std::string resolve_command(const std::string& name, const SandboxPolicy& policy) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& [key, value] : policy.environment) {
    if (key == "PATH") path = value;
  }
  std::string first_existing;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string_view dir = std::string_view(path).substr(start, end - start);
    std::string candidate(dir.empty() ? std::string_view(".") : dir);
    candidate.append(1, '/').append(name);
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      if (first_existing.empty()) first_existing = candidate;  // exec then says "not executable"
    }
    start = end + 1;
  }
  if (!first_existing.empty()) return first_existing;
  std::string missing = "/nonexistent/";  // execve then fails with ENOENT: exit 127
  missing.append(name);
  return missing;
}

}  // namespace stackie
