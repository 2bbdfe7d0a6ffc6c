// Program discovery: where on this host is `initdb`? Searches the block's install-prefix globs
// (newest version first) and then PATH from the passed environment. The loader puts the chosen
// directories in the block's policy read-only, so a sandboxed block sees exactly those binaries.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace stackie {

struct ProgramSearch {
  std::vector<std::string> names;  // file names, tried in order
  std::vector<std::string> globs;  // directories, may contain '*' (e.g. /usr/lib/postgresql/*/bin)
  std::vector<std::string> path;   // PATH entries, in order
  std::string root;                // prefix put before every glob (tests: a fake tree); "" = /
  std::vector<std::string> usual;  // tried last, under `root` too: usual_program_dirs(os)
};

struct FoundProgram {
  // Absolute, as found: symlinks are kept because some programs look at their own name
  // (Debian's redis-server is a symlink to redis-check-rdb and dispatches on argv[0]).
  std::string path;
  std::string dir;       // its directory
  std::string real_dir;  // the directory of the symlink's target (== dir without a symlink)
};

// Order: the block's globs (each newest version first), PATH, then `usual`.
// Why globs before PATH: Debian keeps the postgres server binaries out of PATH and puts
// version-dispatching wrappers in /usr/bin; taking every program of a block from the same
// newest versioned directory keeps initdb, postgres and pg_isready the same major version.
// Returns an empty path when nothing matches.
// With a `version`, only directories a glob's '*' matched with that version count ("15" takes 15
// and 15.4, not 150); PATH and `usual` are not tried then (their version is unknown).
FoundProgram find_program(const ProgramSearch& search, const std::string& version = "");

// The versions (what each glob's '*' matched) under which one of `search.names` is installed,
// highest first, without duplicates.
std::vector<std::string> installed_versions(const ProgramSearch& search);

// Whether `found` (what a '*' matched: "15", "15.4", "postgresql15") is version `wanted`.
bool version_matches(const std::string& found, const std::string& wanted);

// The usual places of installed programs on `os`, after the block's own globs and PATH: a daemon
// started by systemd or launchd has a short PATH (launchd's lacks Homebrew entirely), and the
// same stack must find the same programs whether `up` came from a terminal or not.
std::vector<std::string> usual_program_dirs(const std::string& os);

// The globs of `globs` that are absolute paths on `os`: "C:/Program Files/..." only on windows
// (elsewhere it would be a path relative to the daemon's working directory), "/..." elsewhere.
std::vector<std::string> globs_for_os(const std::vector<std::string>& globs, const std::string& os);

// Splits "a:b::c" into {"a","b","c"} (empty entries dropped: they would mean the cwd).
std::vector<std::string> split_search_path(const std::string& value);

// Version-aware "a < b" on directory names: "9" < "10", "15" < "16.1".
bool version_less(const std::string& a, const std::string& b);

// The install command for `packages` on `os`: "apt-get install postgresql" (linux),
// "brew install postgresql@16" (macos), "winget install PostgreSQL.PostgreSQL" (windows);
// empty when the block names none for that OS.
std::string install_hint(const std::map<std::string, std::string>& packages, const std::string& os);

}  // namespace stackie
