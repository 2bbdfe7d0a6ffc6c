// How a block's exit is told to the user ("exit status 1", "killed by SIGKILL", a setup
// error): one place for `status`, the state's reason and `up`'s failure message.
#pragma once

#include <string>
#include <string_view>

#include "spawn/spawner.h"

namespace stackie {

// The signal N of a sandboxed block's exit status 128+N (stackie-lockbox reports the block's
// death by signal N that way, and 126/127 for exec); 0 for any other exit and for passthrough.
int lockbox_signal(const ExitStatus& status, SandboxKind kind);

std::string describe_exit(const ExitStatus& status, SandboxKind kind);

// "SIGTERM" for any signal the C library knows, else the number.
std::string signal_text(int signum);
// A signal as a user writes it ("SIGKILL", "KILL", "kill", "9"); 0 when it is none.
int parse_signal_text(std::string_view text);

}  // namespace stackie
