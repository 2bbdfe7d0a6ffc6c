// Command line of `stackie-lockbox` (man/stackie-lockbox.1.scd). Pure: parsing builds the same
// SandboxPolicy the daemon sends on --policy-fd, and reading the fds happens in the main.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"

namespace stackie::lockbox {

struct Options {
  SandboxPolicy policy;
  bool policy_flags_used = false;  // any of --ro/--rw/... given (exclusive with --policy-fd)
  std::vector<std::string> command;
  int policy_fd = -1;
  int error_fd = -1;
  int net_fd = -1;                // the daemon's net channel (net_channel_protocol.h)
  int cgroup_fd = -1;             // the block's cgroup v2 directory, made by the daemon
  int lifeline_fd = -1;           // macOS: a byte or EOF here kills the block's processes
  std::vector<int> listen_ports;  // listeners made inside and sent on the net channel
  pid_t join_pid = 0;
  // Windows (`exec`): COMMAND's job ends when this process (the block's monitor) exits, so a
  // command run in a block does not outlive the block.
  int exit_with_pid = 0;
  // Windows: the daemon's stop requests, one byte each: 's' asks COMMAND to stop (CTRL_BREAK to
  // its process group), 'k' ends its job at once. EOF asks nothing (the daemon's job kills us).
  int stop_fd = -1;
  // Windows (`exec`): the block's CPU limit for COMMAND's job (--cpus). Linux and macOS refuse
  // the flag: there the cgroup the command joins carries it, and no rlimit can stand in.
  bool cpus_given = false;
  std::string backend = "auto";  // --backend: auto, namespaces or landlock
  bool print_backend = false;    // --print-backend
  bool print_policy = false;
  bool help = false;
  bool version = false;
};

// argv[0] is the program name. Every error message names the offending option.
Result<Options> parse_options(int argc, const char* const* argv);

// The policy read from --policy-fd replaces the flag-built one; checks the combination.
Status check_options(const Options& options);

extern const char kUsage[];

}  // namespace stackie::lockbox
