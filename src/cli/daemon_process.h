// Starting stackied for `up` and `daemon start`, one file per platform (cli_daemon_posix.cc,
// cli_daemon_windows.cc). The contract is the same everywhere: stackied, run without
// --foreground, makes itself a background process and exits 0 once that daemon serves its
// socket (or pipe), else prints why and exits non-zero; we run it and wait for that exit.
#pragma once

#include "base/error.h"

namespace stackie::cli {

// Runs the stackied next to this stackie (else the one on PATH) and waits for it to exit.
Status spawn_daemon();

}  // namespace stackie::cli
