// Env files (`env_file:` of a stack block, and the `.env` / `.dev.vars` secrets sources): the
// .env syntax compose and most tools read. One NAME=VALUE per line; blank lines and lines
// starting with '#' are comments; an optional `export ` before NAME; VALUE is
//   - unquoted: up to the end of the line or a '#' after whitespace, trimmed;
//   - 'single quoted': literal, may span lines;
//   - "double quoted": may span lines, with the escapes \n \t \r \\ \" \$ (any other backslash
//     stays as written).
// Nothing is interpolated: a '$' is a '$'. Every problem is one FILE:LINE:COLUMN error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "stack/yaml_node.h"

namespace stackie {

struct EnvFileEntry {
  std::string name;
  std::string value;
  SourceLocation where;  // the first character of NAME
};

// The entries in file order; a name given twice appears twice (the later one wins when merged).
Result<std::vector<EnvFileEntry>> parse_env_file(std::string_view text, const std::string& path);

// Reads an env file named in a stack file without following what a block could have planted:
// `path` is absolute and normalised; below `trusted_dir` (the stack file's directory) no
// component may be a symlink, elsewhere the file itself may not be one. Only a regular file of
// at most 1 MiB is read (a FIFO would hang the daemon, a huge file would fill its memory).
// One file per platform: env_file_read_posix.cc, env_file_read_windows.cc.
Result<std::string> read_env_file(const std::string& path, const std::string& trusted_dir);
inline constexpr size_t kMaxEnvFileSize = size_t{1} << 20;

// `env_file:` of a stack block or a compose service: FILE, a list of them, or compose's long
// form `{path: FILE, required: false}`; relative to the stack file's directory.
struct EnvFileDecl {
  YamlNode path;
  bool required = true;
};

struct EnvFileRead {
  std::string path;  // absolute
  std::vector<EnvFileEntry> entries;
};

// Reads each of `files` in order (read_env_file's rules), skipping a missing one that is not
// required. `owner` names who declared them in errors ("block 'api'", "service 'db'").
Result<std::vector<EnvFileRead>> read_declared_env_files(const std::vector<EnvFileDecl>& files,
                                                         const std::string& dir,
                                                         const std::string& owner);

// An entry's value as a scalar taken as written: '$' is doubled so interpolation leaves it.
YamlNode literal_scalar(const EnvFileEntry& entry);

}  // namespace stackie
