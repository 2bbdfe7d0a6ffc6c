// The paths a Seatbelt profile names. Seatbelt matches the real path of each file a sandboxed
// process touches, so the profile must name real paths (/tmp is /private/tmp, /var is
// /private/var on macOS), found before the profile is entered, with the user's rights.
// Portable POSIX so that it is tested on every host; used by the macOS lockbox.
#pragma once

#include "base/error.h"
#include "policy/policy.h"

namespace stackie {

// The policy with every bind source, the host temp directory and each no_create path replaced
// by its real path. A
// path in a directory a block can write (the storage root, a link_free_root) is reached from
// that directory with no link followed, and its real path is that of the file reached: a link
// the block planted there (a runtime directory swapped for a link to ~/.ssh, a project's
// `./conf` made a link to the user's files) fails the launch, naming it, instead of putting
// what it names into the profile. Any other path is the user's own and resolved as the host
// resolves it. A path that does not exist yet keeps the real path of its longest existing
// parent and the rest as written.
Result<SandboxPolicy> seatbelt_resolve_paths(SandboxPolicy policy);

}  // namespace stackie
