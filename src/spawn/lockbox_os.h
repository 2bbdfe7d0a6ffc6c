// What differs between the Linux and the macOS stackie-lockbox, seen from the daemon (one file
// per platform: lockbox_os_linux.cc, lockbox_os_macos.cc). The rest of spawn_lockbox.cc is
// shared.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "spawn/spawner.h"

namespace stackie::spawn_detail {

// linux_namespaces, linux_landlock or seatbelt: what `ps` shows. `landlock`: the daemon chose
// Linux's landlock backend (never on macOS).
SandboxKind lockbox_kind(bool landlock);

// The lockbox's argv up to its fds: Linux names the backend (--backend namespaces|landlock);
// macOS has one backend, Seatbelt, and takes no --backend.
std::vector<std::string> backend_args(const std::string& lockbox, bool landlock);

// True when the lockbox takes --lifeline-fd (macOS): no pid namespace ends the block when the
// monitor dies, so the daemon holds a pipe whose byte or end of file makes the monitor kill
// every process of the block. Linux: SIGKILL of the monitor ends the pid namespace.
bool lockbox_uses_lifeline();

// How blocks' limits are enforced when the daemon has no delegated cgroup (`reason` says why):
// Linux "rlimits (...)", applied by the lockbox; macOS "none (...)": its lockbox applies none.
std::string limits_without_cgroup(const std::string& reason);

// A connected pair for the policy (read end, write end), both close-on-exec, whose write end
// takes `size` bytes without a reader (the policy is written whole before the spawn).
Result<std::pair<int, int>> policy_channel(size_t size);

// A pipe (read end, write end), both close-on-exec.
Result<std::pair<int, int>> cloexec_pipe();

// The net channel of a `network: localhost` block with a namespace of its own (Linux only).
Result<std::pair<int, int>> net_channel_pair();

// True when the lockbox can be a zygote (`--zygote`, zygote_client.h): Linux. macOS execs a
// lockbox per block.
bool lockbox_has_zygote();

// The running executable's path, or "" when unknown.
std::string running_executable();

}  // namespace stackie::spawn_detail
