// `mode: shared` (stackie-stack.yml(5), SHARED BLOCKS): one instance of a catalog block for
// every stack that asks for it, e.g. one postgres for all of a user's projects.
//
// What is "the same instance": the definition's name and the version asked for (the instance
// name, "stackie.postgres" or "stackie.postgres@15"). Everything that changes what runs (the
// definition file, the interpolated vars, the ports inside, the limits; the loader lists them
// in ResolvedBlock::shared_settings) must then be asked for alike: a second stack that asks
// for other settings is refused, naming the setting, never given something else.
//
// Where it lives: below the user's storage root, not below any one stack's
// (volumes/@shared/NAME/..., logs/shared.NAME, tmp/shared.NAME), so that no stack's `down -v`
// or --ephemeral removes what the others use. NAME is one per definition and version, below.
#pragma once

#include <optional>
#include <string>

#include "stack/stack_model.h"

namespace stackie {

// The daemon's stack that holds the shared instances. Not a valid stack name, so no stack file
// can take it.
inline constexpr const char* kSharedStack = "@shared";

// "stackie.postgres", or "stackie.postgres@15" with a version.
std::string shared_instance_name(const std::string& definition, const std::string& version);
// The instance's directory name below volumes/@shared: "postgres", "postgres.15" for the
// catalog's stackie.postgres; "@postgres", "@stackie.pg.15@3" for any other definition (one
// from a repository's sources, or a catalog name with a '.' of its own). One directory per
// definition and version: no definition is ever handed another's data.
std::string shared_instance_dir(const std::string& definition, const std::string& version);
// "shared.postgres", "shared.postgres.15"; "shared..postgres", "shared..stackie._pg._15..3" for
// the long form. One id per definition and version, and never the id of a stack's block.
std::string shared_sandbox_id(const std::string& definition, const std::string& version);

// The instance as the shared stack runs it: the request under the instance's name, without
// what belongs to the asking stack (its consumes, dependencies, profiles).
ResolvedBlock shared_instance_spec(const ResolvedBlock& request);

// What differs between the running instance (shared_instance_spec of the first request) and
// another request of it: "vars.password", "version", "serves.postgres", "limits", or a phrase
// for a difference the settings do not name; nullopt when the two are the same instance. The
// host side of ports is not compared: the instance's forwarded port is the first stack's.
std::optional<std::string> shared_difference(const ResolvedBlock& instance,
                                             const ResolvedBlock& request);

}  // namespace stackie
