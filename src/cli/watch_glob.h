// Which changed paths a block's `watch:` reacts to (stack/stack_model.h WatchSpec): pure, so
// every rule is unit-tested without a file system.
#pragma once

#include <string>
#include <vector>

namespace stackie::cli {

// `glob` against `path` (both relative to the project directory, '/'-separated): `*`, `?` and
// `[...]` within one name, `**` for any number of directories; a glob without '/' matches a
// name at any depth; "." matches everything; a glob that matches a directory matches
// everything below it.
bool glob_matches(const std::string& glob, const std::string& path);

// Never watched, whatever the globs say: version control, dependency and byte-code caches a
// block writes itself when it starts (a restart would start the next one), editors' swap and
// backup files.
bool always_ignored(const std::string& path);

// A change of `path` counts: one of `paths` matches it, none of `ignore`, not always_ignored.
bool watch_wants(const std::vector<std::string>& paths, const std::vector<std::string>& ignore,
                 const std::string& path);

}  // namespace stackie::cli
