// Which Linux sandbox backend this host can run (stackie-lockbox(1) BACKENDS): the namespace
// lockbox needs an unprivileged user namespace that holds its capabilities (mounts work in
// it); where that is denied (max_user_namespaces=0, a container forbidding nesting) or the
// namespace is made without capabilities (Ubuntu 23.10+'s AppArmor restriction), the landlock
// backend runs instead. In base because the lockbox, the daemon and `stackie doctor` all ask.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie {

enum class LinuxBackend { namespaces, landlock };

std::string_view to_string(LinuxBackend backend);
// "namespaces", "landlock"; anything else is an error naming the accepted words.
Result<LinuxBackend> parse_linux_backend(std::string_view text);

struct NamespaceProbe {
  bool works = false;
  std::string step;  // the failing step: "unshare", "uid_map", "mount"
  int errnum = 0;
};

// Tries, in a short-lived child, what the namespace lockbox does first: unshare a user and a
// mount namespace, write the uid map, mount a tmpfs. Costs one fork (about a millisecond).
NamespaceProbe probe_namespace_sandbox();

// The Landlock ABI version of the running kernel, 0 when it has none.
int landlock_abi_version();

// The automatic choice: namespaces when the probe works, else landlock (even with ABI 0: the
// landlock backend then refuses to start, saying why).
struct BackendChoice {
  LinuxBackend backend = LinuxBackend::namespaces;
  NamespaceProbe probe;
  int landlock_abi = 0;
  std::string reason;  // why landlock was chosen; empty for namespaces
};
BackendChoice choose_linux_backend();

}  // namespace stackie
