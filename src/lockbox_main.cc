// `stackie-lockbox`: the sandbox launcher (DESIGN.md §1, §5).
#include <cstdio>
#include <string_view>

#include "version.h"

namespace {

constexpr char kUsage[] =
    "Usage: stackie-lockbox [OPTIONS] -- COMMAND [ARG...]\n"
    "\n"
    "Run COMMAND inside a sandbox built from a policy.\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this help\n"
    "  -V, --version  print version, commit and sandbox backend\n";

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "-V" || arg == "--version") {
      std::printf("%s\n", stackie::version_line("stackie-lockbox").c_str());
      return 0;
    }
  }
  std::fputs(kUsage, stderr);
  return 125;
}
