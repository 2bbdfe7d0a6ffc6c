#include "stack/command_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "base/fs_path.h"
#include "stack/file_kind.h"

namespace stackie {

namespace {

// Keywords and builtins of a POSIX shell: the line's first word is not a file then.
bool shell_word(const std::string& word) {
  static const std::set<std::string> words = {
      "if",    "then",   "else",   "elif",  "fi",      "for",  "while", "until", "do",
      "done",  "case",   "esac",   "in",    "{",       "}",    "!",     "[[",    ".",
      ":",     "source", "cd",     "echo",  "printf",  "test", "[",     "set",   "export",
      "trap",  "eval",   "ulimit", "umask", "command", "wait", "read",  "exit",  "unset",
      "shift", "local",  "true",   "false", "function"};
  return words.count(word) != 0;
}

// The file itself: found, a regular file, executable by us (the daemon runs blocks as us).
Result<std::string> check_file(const std::string& written, const std::string& path,
                               const SandboxPolicy* view) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return Error{-ENOENT, "command not found: " + written +
                              (written == path ? "" : " (looked for " + path + ")")};
  if (!S_ISREG(info.st_mode))
    return Error{-EACCES, "command is not a file: " + written + " (" + path + ")"};
  if (::access(path.c_str(), X_OK) != 0)
    return Error{-EACCES, "command not executable: " + written + " (" + path +
                              "; chmod +x it or run it through its interpreter)"};
  if (view != nullptr) {
    std::string real = resolved_path(path);
    if (!policy_shows(*view, path) || !policy_shows(*view, real))
      return Error{-EACCES, "command outside the sandbox's view: " + written + " (" + real +
                                " is not among the paths the block sees)"};
  }
  return path;
}

}  // namespace

std::string shell_program_word(const std::string& line, size_t* offset) {
  size_t at = 0;
  while (true) {
    at = line.find_first_not_of(" \t\n", at);
    if (at == std::string::npos) return "";
    size_t end = line.find_first_of(" \t\n;&|<>()", at);
    if (end == std::string::npos) end = line.size();
    std::string word = line.substr(at, end - at);
    if (word.empty()) return "";  // an operator first: a shell construct
    if (word.find_first_of("\"'`$\\*?[]{}~#") != std::string::npos) {
      // VAR=value (unquoted, plain) is an assignment before the command.
      size_t equals = word.find('=');
      bool assignment = equals != std::string::npos && equals > 0 &&
                        word.find_first_of("\"'`$\\") == std::string::npos;
      if (!assignment) return "";
      at = end;
      continue;
    }
    if (size_t equals = word.find('='); equals != std::string::npos && equals > 0) {
      at = end;
      continue;
    }
    if (word == "exec") {
      at = end;
      continue;
    }
    if (shell_word(word)) return "";
    if (offset != nullptr) *offset = at;
    return word;
  }
}

Result<std::string> check_program(const ProgramCheck& check) {
  const std::string& name = check.program;
  if (name.empty()) return Error{-ENOENT, "empty command"};
  if (name.find('/') != std::string::npos) {
    std::string path =
        normalize_path(is_host_absolute_path(name) ? name : check.base_dir + "/" + name);
    return check_file(name, path, check.view);
  }
  for (const auto& dir : check.path) {
    std::string path = dir + "/" + name;
    if (::access(path.c_str(), F_OK) == 0) return check_file(name, path, check.view);
  }
  std::string searched;
  for (const auto& dir : check.path) searched += (searched.empty() ? "" : ":") + dir;
  return Error{-ENOENT,
               "command not found: " + name + " (not in the sandbox's PATH " + searched + ")"};
}

}  // namespace stackie
