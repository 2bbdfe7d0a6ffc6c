// The verbs the Windows build does not have yet (docs/platforms.md, "Windows: how far the
// product goes"): each is in the verb table, so `stackie top` says so in one line and exits
// 2, never a silent no-op or an "unknown verb". What each lacks: top/ui a raw console and a
// poll() over the console and the pipe; watch a file watcher (inotify/kqueue today); mcp its
// TCP and regex code; doctor checks for this host (it checks user namespaces and cgroups).
#include <cstdio>

#include "cli/cli.h"
#include "cli/cmd.h"

namespace stackie::cli {

namespace {

int not_yet(const char* verb) {
  std::fprintf(stderr, "stackie %s: not available on Windows yet (docs/platforms.md)\n", verb);
  return kExitUsage;
}

}  // namespace

extern const char kTopUsage[] =
    "Usage: stackie top [STACK]\n\nNot available on Windows yet (docs/platforms.md).\n";
extern const char kWatchUsage[] =
    "Usage: stackie watch [-f FILE] [BLOCK...]\n\nNot available on Windows yet "
    "(docs/platforms.md).\n";
extern const char kMcpUsage[] =
    "Usage: stackie mcp\n\nNot available on Windows yet (docs/platforms.md).\n";
extern const char kDoctorUsage[] =
    "Usage: stackie doctor\n\nNot available on Windows yet (docs/platforms.md).\n";

int run_top(std::span<char*> argv) {
  return not_yet(argv.empty() ? "top" : argv[0]);  // also `ui`
}

int run_watch(std::span<char*>) {
  return not_yet("watch");
}

bool watch_supported() {
  return false;
}

// `up --watch` calls this before it starts anything (cmd_up.cc).
int watch_stack(const std::string&, const std::vector<std::string>&) {
  return not_yet("up --watch");
}

int run_mcp(std::span<char*>) {
  return not_yet("mcp");
}

int run_doctor(std::span<char*>) {
  return not_yet("doctor");
}

}  // namespace stackie::cli
