// The one OS-neutral description of a block's sandbox (DESIGN.md §1, §5, §5b). Blocks and the
// stack loader produce it; each backend (linux_*, seatbelt*, restricted_token*, passthrough)
// translates it. Default-deny: what is not listed here is not visible to the block.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "policy/resource_limits.h"

namespace stackie {

enum class NetworkMode {
  none,       // own network namespace with only `lo`
  localhost,  // own namespace; declared ports cross through the daemon's forwarder (§6)
  host,       // the host's network (still sandboxed otherwise)
};

enum class Identity {
  root,  // the caller is uid/gid 0 inside (the default)
  user,  // the caller keeps its own uid/gid inside (postgres refuses to run as root)
};

std::string_view to_string(NetworkMode mode);
std::string_view to_string(Identity identity);
Result<NetworkMode> parse_network_mode(std::string_view text);
Result<Identity> parse_identity(std::string_view text);

struct BindMount {
  std::string source;  // absolute host path
  std::string dest;    // absolute path inside; empty = same as source
  const std::string& target() const { return dest.empty() ? source : dest; }
  bool operator==(const BindMount&) const = default;
};

struct SandboxPolicy {
  std::string name;  // sandbox id, `<stack>-<block>` (hostname inside; Windows per-block SID)
  bool system_view = true;  // add the default read-only system view (/usr, /lib*, /bin, /etc…)
  std::vector<BindMount> read_only;
  std::vector<BindMount> read_write;
  std::vector<std::string> tmpfs;  // absolute destinations inside
  NetworkMode network = NetworkMode::none;
  Identity identity = Identity::root;
  // The whole environment of the block: nothing of the caller's passes unless listed.
  std::vector<std::pair<std::string, std::string>> environment;
  std::string working_dir;   // inside the sandbox; empty = "/"
  std::string host_tmp_dir;  // host dir backing the private temp dir; empty = a fresh tmpfs
  // The storage root (issue 14): every bind source and the temp dir below it are opened from
  // this directory with no symlink on the way (base/safe_open.h), since the block itself can
  // write there. Empty = no such root (paths are bound as given).
  std::string storage_root;
  // Other directories a block can write into (the stack's project directories, volumes of a
  // host directory): a bind source below one of them is likewise opened from it with no link
  // on the way, since a block may have planted one where the next start binds from (a `./conf`
  // volume, a nested block's project). Their own paths are the user's and taken as given.
  std::vector<std::string> link_free_roots;
  // Paths inside what the block may write that decide the next `up` and do not exist yet (a
  // project's .env, a secrets file, .git): the block may not make them. Seatbelt denies their
  // creation; the namespace and landlock backends cannot (a bind needs something there to cover),
  // and there the daemon refuses one made at the next `up` (supervisor/stack_neighbours.h).
  std::vector<std::string> no_create;
  // Names that resolve to the loopback inside (the sandbox's own /etc/hosts): the blocks this
  // one consumes, whose ports are forwarded there, so `db:5432` works as in compose.
  std::vector<std::string> host_names;
  std::vector<int> pass_fds;  // fds beyond 0-2 that survive into the block
  // TCP ports of the host's network a block with no network namespace of its own (the landlock
  // backend, or macOS's Seatbelt, with `network: localhost`) may bind (its served host ports)
  // and connect to (the host ports of what it consumes); every other port stays closed (a
  // Landlock ruleset, the Seatbelt profile's loopback rules). The namespace backend ignores
  // them: its own network namespace holds only `lo`, and the daemon forwards declared ports.
  std::vector<int> tcp_bind;
  std::vector<int> tcp_connect;
  ResourceLimits limits;  // none by default; the stack loader fills the block's

  bool operator==(const SandboxPolicy&) const = default;
};

// The host paths every sandbox shows read-only when `system_view` is set (/usr, /lib*, /bin,
// the few /etc files the loader and resolver need): one list for the Linux backend, which
// mounts them, and for `stackie validate`, which checks that a block's programs are visible.
const std::vector<std::string>& system_view_paths();

// Whether the host path `path` (absolute, symlinks already resolved by the caller) is inside
// what the policy shows: the system view, a read-only or a read-write bind's source.
bool policy_shows(const SandboxPolicy& policy, std::string_view path);

// The sandbox's /etc/hosts: localhost and every host name on the loopback.
std::string hosts_file_text(const SandboxPolicy& policy);

// Every path absolute and normalised-looking, names sane, no duplicate destinations.
Status validate(const SandboxPolicy& policy);

// The wire form for `stackie-lockbox --policy-fd` (one JSON object, stable field names).
std::string policy_to_json(const SandboxPolicy& policy);
Result<SandboxPolicy> policy_from_json(std::string_view json);

}  // namespace stackie
