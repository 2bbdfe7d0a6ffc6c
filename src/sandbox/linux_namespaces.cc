#include "sandbox/linux_namespaces.h"

#include <cstdio>

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/fnv1a.h"
#include "base/userns_diagnosis.h"

namespace stackie::linux_sandbox {
namespace {

std::optional<SetupError> write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return setup_error(path, errno, std::string("open ") + path);
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return setup_error(path, n < 0 ? err : EIO, std::string("write ") + path);
  return std::nullopt;
}

// What make_namespaces_ahead did in this process: the kind of sandbox it made the namespaces
// of, or the error that stopped it once it was in them (the monitor reports it rather than
// nest more). An unshare that failed made nothing, and leaves nothing noted here.
struct MadeAhead {
  bool own_network;
  bool root_inside;
  std::optional<SetupError> error;
};
std::optional<MadeAhead> made_ahead;

// One call for all of them: the user namespace is created first and owns the others. When it
// is refused, the error carries the diagnosis.
std::optional<SetupError> unshare_with_diagnosis(int flags) {
  if (unshare(flags) == 0) return std::nullopt;
  int err = errno;
  SetupError error{"unshare", err, diagnose_userns_failure(read_userns_facts(err))};
  return error;
}

// In a new user namespace: its maps, the caller's `uid` and `gid` (read before the unshare) as
// 0 or as themselves inside.
std::optional<SetupError> write_maps(uid_t uid, gid_t gid, bool root_inside) {
  // setgroups must be denied before an unprivileged process may write gid_map (user_namespaces(7));
  // it also stops the block from dropping a supplementary group to get past a "deny group" ACL.
  if (auto error = write_file("/proc/self/setgroups", "deny")) return error;
  uid_t inside_uid = root_inside ? 0 : uid;
  gid_t inside_gid = root_inside ? 0 : gid;
  if (auto error = write_file("/proc/self/uid_map",
                              std::to_string(inside_uid) + " " + std::to_string(uid) + " 1\n"))
    return error;
  if (auto error = write_file("/proc/self/gid_map",
                              std::to_string(inside_gid) + " " + std::to_string(gid) + " 1\n"))
    return error;
  return std::nullopt;
}

// `lo` up with one ioctl: cheaper than a netlink round trip, and it is all a new net ns needs.
// The localhost mode's forwarding (DESIGN.md §6) adds sockets made in this namespace by the
// monitor, not interfaces.
std::optional<SetupError> bring_loopback_up() {
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return setup_error("loopback", errno, "socket");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ioctl(sock, SIOCGIFFLAGS, &request);
  if (rc == 0) {
    request.ifr_flags |= IFF_UP;
    rc = ioctl(sock, SIOCSIFFLAGS, &request);
  }
  int err = errno;
  close(sock);
  if (rc != 0) return setup_error("loopback", err, "bring lo up");
  return std::nullopt;
}

// What a spare may make ahead: namespaces that start empty or hold only what the monitor sets
// (the hostname). Not the mount namespace: it starts as a copy of the host's mounts, and a
// spare may wait for minutes, on a host whose mounts do not propagate into copies.
constexpr int kAheadFlags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;

}  // namespace

std::optional<SetupError> enter_new_namespaces(const SandboxPolicy& policy, bool mount_and_cgroup) {
  const bool own_network = policy.network != NetworkMode::host;
  const bool root_inside = policy.identity == Identity::root;
  if (made_ahead) {
    if (made_ahead->error) return made_ahead->error;
    // The zygote hands a spare only requests of the kind it made (the daemon says which), so
    // this is a daemon's mistake; refused, as the block would run in the wrong namespaces.
    if (made_ahead->own_network != own_network || made_ahead->root_inside != root_inside)
      return setup_error("unshare", EINVAL,
                         "the zygote's spare made the namespaces of another kind of sandbox "
                         "(network or identity)");
    if (mount_and_cgroup && unshare(CLONE_NEWNS | CLONE_NEWCGROUP) != 0)
      return setup_error("unshare", errno, "make the mount and cgroup namespaces");
    return std::nullopt;
  }
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (auto error = unshare_with_diagnosis(kAheadFlags | CLONE_NEWNS | CLONE_NEWCGROUP |
                                          (own_network ? CLONE_NEWNET : 0)))
    return error;
  return write_maps(uid, gid, root_inside);
}

std::string sandbox_hostname(const std::string& name) {
  if (name.empty()) return "stackie";
  // The kernel takes at most 64 bytes (HOST_NAME_MAX): a longer id keeps its first 47 and a
  // hash of the whole, so that two long ids that begin alike still differ (--join checks it).
  constexpr size_t kHostNameMax = 64, kKept = 47;
  if (name.size() <= kHostNameMax) return name;
  char suffix[18];
  std::snprintf(suffix, sizeof suffix, "-%016llx", static_cast<unsigned long long>(fnv1a_64(name)));
  return name.substr(0, kKept) + suffix;
}

std::optional<SetupError> configure_namespaces(const SandboxPolicy& policy) {
  const std::string hostname = sandbox_hostname(policy.name);
  if (sethostname(hostname.data(), hostname.size()) != 0)
    return setup_error("sethostname", errno, "set the hostname to " + hostname);
  if (policy.network == NetworkMode::host || made_ahead) return std::nullopt;  // lo is up
  return bring_loopback_up();
}

void make_namespaces_ahead(bool own_network, bool root_inside) {
  if (made_ahead) return;  // once per process: a second unshare would nest
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  // Refused (say user namespaces were off a moment): nothing made, and the monitor tries again
  // for its request, as one forked on the spot would, and reports what it gets then.
  if (unshare_with_diagnosis(kAheadFlags | (own_network ? CLONE_NEWNET : 0))) return;
  made_ahead = MadeAhead{own_network, root_inside, write_maps(uid, gid, root_inside)};
  if (!made_ahead->error && own_network) made_ahead->error = bring_loopback_up();
}

bool namespaces_made_ahead() {
  return made_ahead.has_value();
}

bool pid_namespace_made_ahead() {
  return made_ahead && !made_ahead->error;  // kAheadFlags has CLONE_NEWPID
}

}  // namespace stackie::linux_sandbox
