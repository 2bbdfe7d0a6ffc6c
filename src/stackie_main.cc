// `stackie`: the CLI. Parses the global flags, dispatches to a verb from the command table.
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/version.h"
#include "cli/cli.h"
#include "cli/command_line.h"

namespace stackie::cli {
namespace {

void print_help(FILE* out) {
  std::fprintf(out,
               "Usage: stackie [--version] [--help] COMMAND [ARGS...]\n"
               "\n"
               "Run development services, each in its own sandbox.\n"
               "\n"
               "Commands:\n");
  for (const auto& command : commands())
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(command.name.size()),
                 command.name.data(), static_cast<int>(command.summary.size()),
                 command.summary.data());
  std::fprintf(out,
               "  %-10s %s\n"
               "\n"
               "Options:\n"
               "  -h, --help     show this help\n"
               "  -V, --version  print version, commit and sandbox backend\n",
               "help", "show the usage of a command");
}

int help_for(std::string_view name) {
  const Command* command = find_command(name);
  if (!command) {
    std::fprintf(stderr, "stackie: unknown command '%.*s' (see 'stackie --help')\n",
                 static_cast<int>(name.size()), name.data());
    return kExitUsage;
  }
  std::fwrite(command->usage.data(), 1, command->usage.size(), stdout);
  return kExitOk;
}

}  // namespace
}  // namespace stackie::cli

int main(int argc, char** raw_argv) {
  using namespace stackie::cli;
  // UTF-8 words (Windows: not the ANSI code page), kept alive for the verbs' char* view.
  std::vector<std::string> words = utf8_command_line(argc, raw_argv);
  std::vector<char*> pointers;
  for (std::string& word : words) pointers.push_back(word.data());
  pointers.push_back(nullptr);
  char** argv = pointers.data();
  if (argc < 2) {
    print_help(stderr);
    return kExitUsage;
  }
  std::string_view first = argv[1];
  if (first == "-h" || first == "--help") {
    print_help(stdout);
    return kExitOk;
  }
  if (first == "-V" || first == "--version") {
    std::printf("%s\n", stackie::version_line("stackie").c_str());
    return kExitOk;
  }
  if (first == "help") {
    if (argc < 3) {
      print_help(stdout);
      return kExitOk;
    }
    return help_for(argv[2]);
  }
  const Command* command = find_command(first);
  if (!command) {
    std::fprintf(stderr, "stackie: unknown command '%s' (see 'stackie --help')\n", argv[1]);
    return kExitUsage;
  }
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0)
      return help_for(first);
  }
  return command->run(std::span<char*>(argv + 1, static_cast<size_t>(argc - 1)));
}
