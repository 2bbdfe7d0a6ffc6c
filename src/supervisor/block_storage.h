// A block's storage on the host, made ready before each start (issue 14), and its init as a
// transaction (issue 15).
//
// The block writes into its storage (its /tmp, its volumes) and may leave a symlink where the
// daemon expects a directory; so everything here is opened from the verified storage root with
// no symlink on the way (base/safe_open.h), and a link where a directory belongs fails the
// start, naming it.
//
// Init steps are guarded by what they leave behind (`if: {not_exists: PG_VERSION}`), and a
// program writes such a file early: an init killed half-way (`stackie down`, kill -9 of the
// daemon) would leave a volume whose guard says "done" while the database it was to create
// does not exist. So the daemon keeps its own record, next to each volume and outside the
// sandbox's view (VOLUMES_DIR/.NAME.init): "started" when an init begins on an empty volume,
// "done" only after every step succeeded. A volume found "started" held nothing but what that
// init wrote: it is emptied and the init runs again. The same holds for every block with init
// steps and volumes, catalog or local.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "policy/policy.h"
#include "stack/stack_model.h"

namespace stackie {

// Creates what is missing of the block's volumes, temp dir and log dir (0700), and makes its
// runtime dirs (a definition's `runtime:` paths, below the temp dir) afresh: whatever the last
// run left there is removed, never followed. Paths outside the storage root (a first-party
// block's own directory, a volume with a host path of the user's) are only created when
// missing, as the user named them.
Status prepare_block_storage(const SandboxPolicy& policy, const std::string& log_dir);

// The block's volumes: its read-write paths that are named volumes under its storage root.
std::vector<std::string> block_volumes(const ResolvedBlock& block);

// "", "started" or "done": the init record of one volume.
std::string init_record(const std::string& volume);

// Before a start: empties each volume whose init was interrupted, prepares the storage
// (prepare_block_storage), and records "started" on each volume that is empty (its init is
// about to fill it). Returns one note per volume emptied. An error says what to delete by hand.
Result<std::vector<std::string>> prepare_storage(const ResolvedBlock& block,
                                                 const std::string& log_dir);

// After every init step succeeded: records "done" on each volume of the block.
Status record_init_done(const ResolvedBlock& block);

}  // namespace stackie
