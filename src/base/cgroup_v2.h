// Where this process's cgroup v2 directory is, and whether its user may manage it: the
// question the daemon asks before it makes one cgroup per block (spawn/cgroup_tree.h), and
// `stackie doctor` asks to say which enforcement of the block limits is in use. Read-only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace stackie {

struct DelegatedCgroup {
  std::string dir;                       // absolute, under the cgroup2 mount
  std::vector<std::string> controllers;  // cgroup.controllers: "cpu", "memory", "pids"...
  bool has(std::string_view controller) const;
};

// This process's cgroup when it is delegated to this user (systemd `Delegate=yes`): not the
// root, owned by this uid, cgroup.procs and cgroup.subtree_control writable, and the pids and
// memory controllers available. Otherwise the error's message says what is missing, in one
// line ("in the root cgroup (/), which is not delegated").
Result<DelegatedCgroup> find_delegated_cgroup();

// The pure parts, for tests. "0::/user.slice/x.service\n" (/proc/self/cgroup) -> the v2 path,
// "" when there is no v2 line.
std::string cgroup_v2_path(std::string_view proc_cgroup);
// The mount point of the cgroup2 filesystem in /proc/self/mountinfo text ("" when none).
std::string cgroup2_mount_point(std::string_view mountinfo);

}  // namespace stackie
