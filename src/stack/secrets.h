// Secrets for ${secrets.NAME}. Looked up, in order: the passed environment (the CLI's, never
// the daemon's own), the companion `<stem>.secrets.yml` (`secrets:` map) next to the stack
// file, then `.env` and `.dev.vars` in the stack file's directory. Files are read on first use
// and only if they exist; a malformed one is an error with its position.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace stackie {

class SecretStore {
 public:
  // `stack_file` is absolute; its directory holds the companion files.
  SecretStore(std::map<std::string, std::string> env, const std::string& stack_file);

  // The value, or nullopt when no source has it. Errors are file errors (syntax, unreadable).
  Result<std::optional<std::string>> lookup(const std::string& name);

  // For "missing secret" messages: "the environment, demo.secrets.yml, .env, .dev.vars".
  std::string sources_description() const;

  // The names lookup() found in the environment: what a restore needs of it (state.json keeps
  // these, not the whole environment of the `up`).
  const std::vector<std::string>& names_found_in_env() const { return found_in_env_; }
  // The secrets files that exist (companion, .env, .dev.vars), absolute: a first-party block's
  // project bind shows them read-only.
  std::vector<std::string> existing_files() const;
  // All three, whether they exist or not (one made later would be read by the next load).
  std::vector<std::string> files() const {
    return {companion_.path, dot_env_.path, dev_vars_.path};
  }
  // "FILE: warning: ..." for each secrets file read that group or others may read.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Source {
    std::string path;
    bool loaded = false;
    std::map<std::string, std::string> values;
  };
  Status load(Source& source, bool yaml);

  std::map<std::string, std::string> env_;
  std::vector<std::string> found_in_env_;
  std::vector<std::string> warnings_;
  Source companion_;
  Source dot_env_;
  Source dev_vars_;
};

// The companion file name: "<dir>/<stem>.secrets.yml" for "<dir>/<stem>.yml|.yaml".
std::string companion_secrets_path(const std::string& stack_file);

// Parses a dotenv file (stack/env_file.h's syntax) into a map: the last of a repeated name wins.
Result<std::map<std::string, std::string>> parse_dotenv(const std::string& text,
                                                        const std::string& path);

}  // namespace stackie
