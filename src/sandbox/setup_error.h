// How stackie-lockbox reports a failed setup step, on every platform (DESIGN.md §1): one JSON
// line `{"step":"...","errno":N,"message":"..."}` on the error fd, or a human line on stderr when
// the caller gave no error fd. Every process of the lockbox (monitor, pid 1 on Linux, the block
// before exec) reports through the same sink, so the daemon sees exactly one line whoever failed.
#pragma once

#include <string>
#include <string_view>

namespace stackie {

struct SetupError {
  std::string step;  // short, stable: "unshare", "uid_map", "mount /usr", "exec", ...
  int errnum = 0;    // errno of the failing call, 0 when there is none
  std::string message;
};

SetupError setup_error(std::string_view step, int errnum, std::string_view message);

// The JSON line (with its trailing newline), written with base/json.h like every other JSON
// of the project.
std::string setup_error_json(const SetupError& error);

// Where failures go: `error_fd` >= 0 gets the JSON line; otherwise stderr gets
// "stackie-lockbox: STEP: MESSAGE".
struct ErrorSink {
  int error_fd = -1;
};

void report(const ErrorSink& sink, const SetupError& error);

// What the Windows monitor writes on its error fd once the block runs, before closing it. The
// end of file alone is not enough there: a monitor with a console of its own (CREATE_NO_WINDOW)
// may have a console host that inherited the fd (Wine's does), so the end of file can come
// only when the monitor exits. A report never starts with this line: it is JSON.
inline constexpr std::string_view kBlockStartedLine = "started\n";

// Exit codes of stackie-lockbox (DESIGN.md §5).
inline constexpr int kExitSetupFailed = 125;
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;

}  // namespace stackie
