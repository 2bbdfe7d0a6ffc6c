// The passthrough spawner on Windows: refused, not faked. An unsandboxed block must still die
// with the daemon and take its whole tree with it; on POSIX a monitor (passthrough_monitor.h)
// does that, on Windows it would be a job without the restricted token, which is not built yet.
// Until then `sandbox: false` and --no-sandbox fail the block's start with this reason, and
// every block runs under its restricted token.
#include <cstdio>

#include "spawn/passthrough_monitor.h"
#include "spawn/spawner.h"

namespace stackie {

namespace {

class RefusingPassthroughSpawner final : public Spawner {
 public:
  SandboxKind kind() const override { return SandboxKind::passthrough; }
  Result<std::unique_ptr<Process>> spawn(uv_loop_t*, const SpawnRequest&, ExitCallback) override {
    return Error{UV_ENOTSUP,
                 "unsandboxed blocks (sandbox: false, --no-sandbox) are not supported on "
                 "Windows yet: every block runs under its restricted token"};
  }
};

}  // namespace

std::unique_ptr<Spawner> make_passthrough_spawner(std::string) {
  return std::make_unique<RefusingPassthroughSpawner>();
}

int run_passthrough_monitor(int, char**) {
  std::fputs("stackied: --passthrough-monitor is not used on Windows\n", stderr);
  return 2;
}

}  // namespace stackie
