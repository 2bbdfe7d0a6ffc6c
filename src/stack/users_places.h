// Where a user's own files and sockets are, which a block definition's grants may not reach
// (stackie-block(5), sandbox): a definition from someone else's catalog is given the system's
// paths (/usr/share/zoneinfo, /etc/ssl); the stack gives a block the user's, as volumes.
#pragma once

#include <string>
#include <vector>

#include "stack/paths.h"

namespace stackie {

struct UserPlace {
  std::string what;  // "your home directory", for messages
  std::string dir;   // absolute, normalised
};

// The home (keys, every project), the runtime directory (the agent's, the keyring's and the
// session bus's sockets), the temp directories (ssh-agent's socket in /tmp), the system's run
// directory (docker's socket), mounted drives and `project`. Taken from `env` (the client's)
// and from this process's own view (the account's home, its environment): a restore's or the
// API's environment may not name them. Innermost first; a root ("/", "C:/") is never one.
std::vector<UserPlace> users_places(const Environment& env, const std::string& project);

// `normal` (absolute, normalised) as the file system takes it when it does not exist yet: its
// deepest existing directory resolved (path_for_comparison), the rest appended. So
// /var/run/user/1000/new compares as /run/user/1000/new.
std::string resolved_through_existing(const std::string& normal);

}  // namespace stackie
