// The tiny monitor in front of every passthrough (`sandbox: false`) block, so that such a
// block dies with the daemon as a sandboxed one does (its lockbox monitor does the same). It
// is stackied itself, run as `stackied --passthrough-monitor DAEMON_PID -- CMD...`: the
// leader of the block's process group, it runs CMD as its child and exits as CMD did; when
// the daemon dies, even by SIGKILL, the kernel tells it (PR_SET_PDEATHSIG) and it kills the
// whole group. Without it a passthrough block survived kill -9 of the daemon and held its
// port, so the next restore failed (issue 15).
#pragma once

namespace stackie {

inline constexpr char kPassthroughMonitorFlag[] = "--passthrough-monitor";

// argv[1] is kPassthroughMonitorFlag. Returns only on a usage error (127); otherwise exits
// with CMD's status, or dies of CMD's signal.
int run_passthrough_monitor(int argc, char** argv);

}  // namespace stackie
