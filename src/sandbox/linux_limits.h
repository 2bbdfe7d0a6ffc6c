// A block's resource limits, applied by the lockbox's monitor to itself before it forks the
// sandbox's pid 1 (DESIGN.md §1; stackie-lockbox(1) LIMITS). Two enforcements:
//
// - cgroup v2: the daemon made the block a cgroup in its delegated subtree, set pids.max,
//   memory.max, memory.swap.max and cpu.max there, and passes it as --cgroup-fd; the monitor
//   moves itself into it before it creates any namespace, so everything the block ever runs is
//   inside (and the sandbox's cgroup namespace is rooted there: the block sees "/").
// - rlimits, where no cgroup was given: RLIMIT_NPROC for pids, RLIMIT_DATA for memory. The
//   /dev/shm size (linux_rootfs.cc) applies under both.
#pragma once

#include <sys/types.h>

#include <optional>

#include "policy/resource_limits.h"
#include "sandbox/setup_error.h"

namespace stackie::linux_sandbox {

// Writes "0" to cgroup.procs of the directory `cgroup_fd` (then closed): this process (and
// every child it forks from now on) belongs to that cgroup.
std::optional<SetupError> join_cgroup(int cgroup_fd);

// The fallback. Must run after unshare(CLONE_NEWUSER): since Linux 5.14 the kernel counts
// RLIMIT_NPROC per user namespace (ucounts), so the limit bounds the processes of this
// sandbox, not every process of the user. On an older kernel the count is the user's, so the
// limit becomes (the user's tasks now, threads included) + pids: a bomb is still bounded, by a
// looser count that the user's other programs share.
// RLIMIT_DATA bounds each process's private writable memory (brk, malloc, anonymous maps):
// per process, not per block, and shared memory is bounded by the /dev/shm size instead.
// `own_user_namespace` false (the landlock backend: no namespace at all): RLIMIT_NPROC counts
// every task of the user, so the limit is (the user's tasks now) + pids.
std::optional<SetupError> apply_rlimits(const ResourceLimits& limits,
                                        bool own_user_namespace = true);

// `--join`: what runs inside a sandbox is bound by its limits too (an exec health check may
// run the block's own code). Takes `target`'s RLIMIT_NPROC and RLIMIT_DATA (lowering only),
// and, when `target` is in a block cgroup of stackied (block-*), moves this process into it.
// Call before setns: the cgroup path is read as the host sees it.
std::optional<SetupError> adopt_limits_of(pid_t target);

// True on Linux >= 5.14 (RLIMIT_NPROC counted per user namespace).
bool nproc_counted_per_user_namespace();

}  // namespace stackie::linux_sandbox
