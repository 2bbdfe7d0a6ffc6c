// One catalog block as `stackie blocks`, `stackie search` and the loader see it: its definition
// (an alias such as stackie.mysql followed to its target) and, for each of its programs, where
// this host has it or how to install it.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "stack/block_def.h"
#include "stack/programs.h"

namespace stackie {

// Where to look for programs: the caller's PATH, the OS (globs and install hints) and, in
// tests, a prefix for every glob and usual directory.
struct ProgramHost {
  std::vector<std::string> path;  // PATH entries
  std::string os;
  std::string root;
};

// Finds one of a definition's programs the way the loader does: its globs (newest version
// first), PATH, then the usual directories of `host.os`.
// With a `version`, only the versioned directories of its globs that match it count.
FoundProgram find_block_program(const ProgramDecl& program, const ProgramHost& host,
                                const std::string& version = "");

// The versions of `program` installed in its versioned directories, highest first.
std::vector<std::string> installed_block_versions(const ProgramDecl& program,
                                                  const ProgramHost& host);

// Whether any program of `def` has a versioned search directory (a glob with '*').
bool has_versioned_programs(const BlockDef& def);

// The install command for `version` of `program` on `os` (its version_packages with '*'
// replaced), else its plain install hint.
std::string version_install_hint(const ProgramDecl& program, const std::string& version,
                                 const std::string& os);

struct ProgramStatus {
  std::string name;
  std::string path;          // "" when not found
  std::string install_hint;  // for host.os; "" when the block names no package there
};

struct CatalogEntry {
  std::string name;      // as asked (stackie.mysql)
  std::string alias_of;  // the definition's own name when `name` is an alias, else ""
  BlockDef def;          // the followed definition (def.file is its file)
  std::vector<ProgramStatus> programs;
  bool ready() const;  // every program found
};

// Loads `name` from the catalog directories `dirs`, following one alias. Errors: no such block
// (with a "did you mean"), a definition that does not parse (FILE:LINE:COL), an alias of an
// alias or of a missing block.
Result<BlockDef> load_catalog_def(const std::string& name, const std::vector<std::string>& dirs,
                                  std::string* alias_of = nullptr);

// `load_catalog_def` plus where each program is on this host.
Result<CatalogEntry> describe_catalog_block(const std::string& name,
                                            const std::vector<std::string>& dirs,
                                            const ProgramHost& host);

// Whether `term` (case-insensitive) occurs in the entry's name, alias target or description.
bool catalog_entry_matches(const CatalogEntry& entry, const std::string& term);

}  // namespace stackie
