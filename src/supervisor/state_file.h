// The daemon's JSON state file, $STACKIE_HOME/state.json: which stacks are up, with enough of
// each `up` request to load them again (file, cwd, the part of the client's environment the
// stack referenced, flags), so a restarted daemon brings them back. Written atomically (temp
// file + rename) in the home directory, never through a symlink, mode 0600: the environment
// kept may hold secrets.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace stackie {

struct UpRequest {
  std::string file;                                      // the stack file, absolute
  std::string cwd;                                       // the client's working directory
  std::vector<std::pair<std::string, std::string>> env;  // the client's environment subset
  bool ephemeral = false;
  bool no_sandbox = false;
  std::string project_name;  // -p NAME: the stack's name instead of the file's
  // `up BLOCK...` (empty: the file's default set) and `--profile NAME...` (stack/loader.h).
  // What the state file keeps is what the stack runs: the names of all its blocks once an
  // `up` of part of it, or of more than its default set, made them differ.
  std::vector<std::string> blocks;
  std::vector<std::string> profiles;
  bool operator==(const UpRequest&) const = default;
};

struct StackRecord {
  std::string name;
  UpRequest request;
  // The blocks the last interactive `up` ran without a sandbox (and warned about): a restore
  // never runs any other block unsandboxed (issue 14).
  std::vector<std::string> unsandboxed;
  bool operator==(const StackRecord&) const = default;
};

// What of the client's environment a restore needs, and so what state.json keeps (issue 14:
// not every token of the user's shell): the variables the stack referenced (`referenced`: PATH,
// the secrets it found in the environment, ...) and the STACKIE_* settings.
std::vector<std::pair<std::string, std::string>> environment_to_keep(
    const std::vector<std::pair<std::string, std::string>>& env,
    const std::vector<std::string>& referenced);

std::string state_to_json(const std::vector<StackRecord>& stacks);
Result<std::vector<StackRecord>> state_from_json(const std::string& text);

// A missing file is an empty state.
Result<std::vector<StackRecord>> read_state_file(const std::string& path);
Status write_state_file(const std::string& path, const std::vector<StackRecord>& stacks);

}  // namespace stackie
