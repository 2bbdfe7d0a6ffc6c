#include "sandbox/linux_namespaces.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

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

}  // namespace

std::optional<SetupError> enter_new_namespaces(const SandboxPolicy& policy) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  int flags =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (policy.network != NetworkMode::host) flags |= CLONE_NEWNET;
  // One call for all of them: the user namespace is created first and owns the others.
  if (unshare(flags) != 0) {
    int err = errno;
    SetupError error{"unshare", err, diagnose_userns_failure(read_userns_facts(err))};
    return error;
  }
  // setgroups must be denied before an unprivileged process may write gid_map (user_namespaces(7));
  // it also stops the block from dropping a supplementary group to get past a "deny group" ACL.
  if (auto error = write_file("/proc/self/setgroups", "deny")) return error;
  uid_t inside_uid = policy.identity == Identity::root ? 0 : uid;
  gid_t inside_gid = policy.identity == Identity::root ? 0 : gid;
  if (auto error = write_file("/proc/self/uid_map",
                              std::to_string(inside_uid) + " " + std::to_string(uid) + " 1\n"))
    return error;
  if (auto error = write_file("/proc/self/gid_map",
                              std::to_string(inside_gid) + " " + std::to_string(gid) + " 1\n"))
    return error;
  return std::nullopt;
}

std::optional<SetupError> configure_namespaces(const SandboxPolicy& policy) {
  std::string hostname = policy.name.empty() ? "stackie" : policy.name;
  if (sethostname(hostname.data(), hostname.size()) != 0)
    return setup_error("sethostname", errno, "set the hostname to " + hostname);
  if (policy.network == NetworkMode::host) return std::nullopt;
  // `lo` up with one ioctl: cheaper than a netlink round trip, and it is all a new net ns needs.
  // The localhost mode's forwarding (DESIGN.md §6) adds sockets made in this namespace by the
  // monitor, not interfaces.
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

}  // namespace stackie::linux_sandbox
