// The directories a block can write into, from where the lockbox reaches what it binds or
// grants below them. A block may have planted a symbolic link anywhere it can write: its
// storage (a runtime dir swapped for a link to ~/.ssh), or a project directory that another
// block binds from (a `./conf` volume, a nested block's `path`). Following such a link would
// hand the block, or its neighbour, whatever the link names, with the user's rights. So a path
// below one of these roots is opened from the root with no link on the way (base/safe_open.h);
// any other path is the user's own choice and opened as the host resolves it.
//
// The roots: the policy's storage_root and its link_free_roots. A root inside another is
// reached from the outer one (so a nested project swapped for a link is refused too); the
// outermost roots' own paths are trusted as given (the user named them).
//
// Linux binds and grants what it opened (linux_rootfs.cc, linux_landlock.cc); macOS names the
// opened file's real path in the Seatbelt profile (seatbelt_paths.h).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "base/safe_open.h"
#include "policy/policy.h"

namespace stackie {

class ConfinedRoots {
 public:
  // Opens each outermost root for lookup (O_PATH where there is one). A root that does not exist,
  // or is not a directory, is left out (nothing below it exists); any other failure is an error
  // naming the root.
  static Result<ConfinedRoots> open(const SandboxPolicy& policy);

  // `path` opened for lookup: from the outermost root it is at or below, refusing any link on the
  // way ("PATH: is a symbolic link"), else as given. The error's code is the negated errno.
  Result<UniqueFd> open_path(const std::string& path) const;

  // Whether `path` is at or below one of the roots: open_path reaches it with no link followed.
  bool holds(const std::string& path) const;

 private:
  struct Root {
    std::string path;
    UniqueFd fd;
  };
  std::vector<Root> roots_;
};

}  // namespace stackie
