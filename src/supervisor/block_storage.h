// A block's storage on the host, made ready before each start (issue 14). The block writes
// into its storage (its /tmp, its volumes) and may leave a symlink where the daemon expects a
// directory; so everything here is opened from the verified storage root with no symlink on
// the way (base/safe_open.h), and a link where a directory belongs fails the start, naming it.
#pragma once

#include <string>

#include "base/error.h"
#include "policy/policy.h"

namespace stackie {

// Creates what is missing of the block's volumes, temp dir and log dir (0700), and makes its
// runtime dirs (a definition's `runtime:` paths, below the temp dir) afresh: whatever the last
// run left there is removed, never followed. Paths outside the storage root (a first-party
// block's own directory, a volume with a host path of the user's) are only created when
// missing, as the user named them.
Status prepare_block_storage(const SandboxPolicy& policy, const std::string& log_dir);

}  // namespace stackie
