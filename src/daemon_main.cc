// `stackied`: the per-user daemon (DESIGN.md §1, §7).
#include <cstdio>
#include <string_view>

#include "version.h"

namespace {

constexpr char kUsage[] =
    "Usage: stackied [--foreground] [--help] [--version]\n"
    "\n"
    "The Stackie daemon: supervises every block of every stack the user has up.\n"
    "\n"
    "Options:\n"
    "  --foreground   stay in the foreground and log to stderr\n"
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
      std::printf("%s\n", stackie::version_line("stackied").c_str());
      return 0;
    }
  }
  std::fputs(kUsage, stderr);
  return 2;
}
