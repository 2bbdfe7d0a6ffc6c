// Signal forwarding and reaping shared by the monitor, pid 1 and `--join` (DESIGN.md §1).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>

#include "sandbox/linux_lockdown.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// TERM INT HUP QUIT USR1 USR2 WINCH, plus CHLD.
const sigset_t& handled_signals();
void block_handled_signals();

// pid 1 of a pid namespace receives a signal only if it has a handler for it (the kernel drops
// SIG_DFL signals to a namespace init, even from an ancestor): install no-op handlers; the
// signals stay blocked and are taken with signalfd.
void install_forwarding_handlers();

// What forward_until_exit does besides forwarding signals.
struct Forwarding {
  // pid 1: other children (orphans re-parented to it) are reaped on the way.
  bool reap_all = false;
  // The monitor: kTreeKillSignal (linux_launch.h) SIGKILLs `child`, pid 1, and the wait goes on
  // until it is reaped, which is once every process of its pid namespace is gone: the monitor's
  // exit then says the sandbox is gone. A SIGKILL of the monitor itself would leave pid 1 to its
  // parent-death signal, with the namespace still dying after the monitor was reported.
  bool tree_kill = false;
  // The monitor of a `network: localhost` sandbox: the daemon's socket requests on the net
  // channel are answered on the way too.
  int net_fd = -1;
};

// Forward every handled signal to `child` until it exits; returns its exit code (128+N for a
// signal).
int forward_until_exit(pid_t child, const Forwarding& forwarding = {});

// The report for a child that failed before or at execve.
SetupError describe_child_failure(const ChildFailure& failure, const std::string& command);

}  // namespace stackie::linux_sandbox
