// The edge every stackie-lockbox main shares (Linux: lockbox_main.cc, macOS:
// lockbox_main_macos.cc): parse the command line, read the policy from --policy-fd, answer
// --help, --version and --print-policy, check the fds. Failures are reported once, on the error
// fd when there is one (setup_error.h).
#pragma once

#include <optional>

#include "sandbox/lockbox_options.h"
#include "sandbox/setup_error.h"

namespace stackie::lockbox {

struct Input {
  Options options;  // options.policy is the one to apply (from the fd or the flags)
  ErrorSink sink;
  // Set before read_input: an fd of the lockbox's own (a zygote monitor's socket to its pid 1
  // forked ahead, linux_init_ahead.h), which no option may name: it reads as not open.
  int own_fd = -1;
};

// nullopt: `input` is ready to launch. A value: the exit code (0 after --help and friends,
// kExitSetupFailed after a reported error).
std::optional<int> read_input(int argc, char** argv, Input& input);

// Reports a failed step on `sink` and returns kExitSetupFailed.
int fail(const ErrorSink& sink, std::string_view step, int errnum, const std::string& message);

}  // namespace stackie::lockbox
