// `stackie convert [-f FILE]`: a Compose file as the equivalent stackie-stack.yml on stdout,
// with what did not map as comments (stackie-compose(7)), so a project can move over for good.
// Reads files only; no daemon.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/compose_file.h"
#include "stack/loader.h"
#include "stack/paths.h"
#include "stack/stack_file.h"

namespace stackie::cli {

extern const char kConvertUsage[] =
    "Usage: stackie convert [-f FILE]\n"
    "\n"
    "Print the stackie-stack.yml equivalent to a Compose file (compose.yaml, compose.yml,\n"
    "docker-compose.yaml, docker-compose.yml in the current directory, or FILE), with what\n"
    "did not map as comments at its top. Redirect it to stackie-stack.yml to keep it; that\n"
    "name is then found first.\n"
    "\n"
    "Options:\n"
    "  -f, --file FILE  the Compose file\n"
    "\n"
    "Exit status: 0 printed, 1 the file does not load or is not a Compose file, 2 usage error.\n";

namespace {

// The Compose file: FILE, else the first of the Compose names in `cwd`.
std::string find_compose_file(const std::string& file, const std::string& cwd) {
  if (!file.empty()) return is_host_absolute_path(file) ? file : cwd + "/" + file;
  for (const auto& name : compose_file_names())
    if (::access((cwd + "/" + name).c_str(), F_OK) == 0) return cwd + "/" + name;
  return "";
}

}  // namespace

int run_convert(std::span<char*> argv) {
  std::string file;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    if (arg == "-f" || arg == "--file") {
      if (i + 1 >= argv.size())
        return usage_error("convert", "option '" + std::string(arg) + "' needs a FILE");
      file = argv[++i];
    } else if (arg.rfind("--file=", 0) == 0) {
      file = std::string(arg.substr(7));
    } else {
      return usage_error("convert", "unknown argument '" + std::string(arg) + "'");
    }
  }
  auto here = current_directory();
  if (!here.ok()) {
    std::fprintf(stderr, "stackie convert: %s\n", here.error().message.c_str());
    return kExitFailed;
  }
  const std::string& cwd = *here;
  std::string path = find_compose_file(file, cwd);
  if (path.empty()) {
    std::fprintf(stderr,
                 "%s: no Compose file (looked for compose.yaml, compose.yml, "
                 "docker-compose.yaml, docker-compose.yml; use -f FILE)\n",
                 cwd.c_str());
    return kExitFailed;
  }
  Environment env = current_environment();
  std::vector<std::string> block_path;
  for (const auto& dir : default_block_path(env))
    block_path.push_back(is_host_absolute_path(dir) ? dir : cwd + "/" + dir);
  Result<std::string> text = convert_compose(normalize_path(path), env, block_path);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.error().message.c_str());
    return kExitFailed;
  }
  std::fputs(text->c_str(), stdout);
  return kExitOk;
}

}  // namespace stackie::cli
