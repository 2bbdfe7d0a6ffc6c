// A block's storage on the host, made just before its sandbox (the loader never touches the
// disk), and its init as a transaction (issue 15).
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
#include "stack/stack_model.h"

namespace stackie {

// Creates the block's volumes and temp directory when missing (a path that exists, such as a
// first-party block's own directory, is left as it is).
Status create_storage(const SandboxPolicy& policy);

// The block's volumes: its read-write paths that are named volumes under its storage root.
std::vector<std::string> block_volumes(const ResolvedBlock& block, const std::string& storage_root);

// "", "started" or "done": the init record of one volume.
std::string init_record(const std::string& volume);

// Before a start: empties each volume whose init was interrupted, creates the storage, and
// records "started" on each volume that is empty (its init is about to fill it). Returns one
// note per volume emptied. An error says what to delete by hand.
Result<std::vector<std::string>> prepare_storage(const ResolvedBlock& block,
                                                 const std::string& storage_root);

// After every init step succeeded: records "done" on each volume of the block.
Status record_init_done(const ResolvedBlock& block, const std::string& storage_root);

}  // namespace stackie
