#include "sandbox/linux_landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "base/safe_open.h"
#include "sandbox/confined_roots.h"

namespace stackie::linux_sandbox {
namespace {

// The kernel's ABI is stable and only grows; the build host's <linux/landlock.h> may predate
// ABI 4 (Debian 12 ships the 6.1 header), so the wider structures and the newer rights are
// spelled here as the kernel defines them.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};
struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};
constexpr int kRuleNetPort = 2;  // LANDLOCK_RULE_NET_PORT
constexpr uint64_t kFsTruncate = 1ULL << 14;
constexpr uint64_t kFsIoctlDev = 1ULL << 15;
constexpr uint64_t kNetBindTcp = 1ULL << 0;
constexpr uint64_t kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0;
constexpr uint64_t kScopeSignal = 1ULL << 1;

constexpr uint64_t kFsRead =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kFsMake = LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                             LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                             LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                             LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr uint64_t kFsWriteAbi1 = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                                  LANDLOCK_ACCESS_FS_REMOVE_FILE | kFsMake;
// The rights that apply to a file (not a directory): add_rule refuses the others on a file.
constexpr uint64_t kFsFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                   LANDLOCK_ACCESS_FS_READ_FILE | kFsTruncate | kFsIoctlDev;

// The device nodes every program may open (the namespace lockbox binds the same into its /dev).
constexpr const char* kDevices[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                    "/dev/random", "/dev/urandom", "/dev/tty"};

uint64_t handled_fs(int abi) {
  uint64_t fs = kFsRead | kFsWriteAbi1;
  if (abi >= 2) fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) fs |= kFsTruncate;
  if (abi >= 5) fs |= kFsIoctlDev;
  return fs;
}

bool under(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

// A rule follows the fd it is given, so a followed link would grant the block the link's
// target: a path below a directory the block can write (its storage, a project) is opened with
// no link on the way (confined_roots.h). `--join` rebuilds the ruleset while the block runs:
// nothing there may be followed then either.
class Ruleset {
 public:
  Ruleset(int fd, int abi, ConfinedRoots roots)
      : fd_(fd), fs_(handled_fs(abi)), roots_(std::move(roots)) {}
  ~Ruleset() {
    if (fd_ >= 0) close(fd_);
  }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // `path` opened O_PATH, never through a link the block could have planted.
  Result<UniqueFd> open_rule_path(const std::string& path) const {
    auto opened = roots_.open_path(path);
    // Worded as the namespace lockbox words a missing source; the errno is reported apart.
    if (!opened.ok() && opened.error().message == path)
      return Error{opened.error().code, "bind " + path + " (its Landlock rule)"};
    return opened;
  }
  // Rights on `path` and everything beneath it; absent paths are skipped when optional.
  std::optional<SetupError> allow_path(const std::string& path, uint64_t rights, bool optional) {
    auto opened = open_rule_path(path);
    if (!opened.ok()) {
      int err = -opened.error().code;
      if (optional && (err == ENOENT || err == ENOTDIR)) return std::nullopt;
      return setup_error("landlock", err, opened.error().message);
    }
    return allow_fd(opened->get(), path, rights);
  }
  // Rights on the object `fd` (opened O_PATH) and everything beneath it.
  std::optional<SetupError> allow_fd(int fd, const std::string& shown, uint64_t rights) {
    struct stat st;
    if (fstat(fd, &st) != 0) return setup_error("landlock", errno, "stat " + shown);
    if (!S_ISDIR(st.st_mode)) rights &= kFsFileRights;
    landlock_path_beneath_attr attr{};
    attr.allowed_access = rights & fs_;
    attr.parent_fd = fd;
    if (attr.allowed_access == 0) return std::nullopt;
    if (syscall(SYS_landlock_add_rule, fd_, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0)
      return setup_error("landlock", errno, "rule for " + shown);
    return std::nullopt;
  }
  std::optional<SetupError> allow_port(int port, uint64_t rights) {
    NetPortAttr attr{rights, static_cast<uint64_t>(port)};
    if (syscall(SYS_landlock_add_rule, fd_, kRuleNetPort, &attr, 0) != 0)
      return setup_error("landlock", errno, "rule for TCP port " + std::to_string(port));
    return std::nullopt;
  }
  uint64_t fs() const { return fs_; }

 private:
  int fd_;
  uint64_t fs_;
  ConfinedRoots roots_;
};

uint64_t read_write_rights(uint64_t fs) {
  return fs;  // everything handled, beneath this path
}

// A read-write directory `dir` (open as `dir_fd`) with read-only paths somewhere below it:
// Landlock only adds rights along a path, so `dir` itself cannot be writable. Instead each
// directory on the way to a protected path gets read and create rights (no write, truncate,
// remove or rename: the protected entry can neither be rewritten nor replaced), and every other
// entry of those directories gets the full read-write rights. An entry made later directly in
// such a directory can be created but not written: the one behaviour the namespace lockbox does
// not share (stackie-lockbox(1) BACKENDS). The entries are opened from `dir_fd` without
// following a link (the block may be running, under --join, and swap one in): a link is
// skipped, its target gets nothing.
std::optional<SetupError> allow_read_write_around(Ruleset& rules, int dir_fd,
                                                  const std::string& dir,
                                                  const std::vector<std::string>& protected_paths) {
  std::vector<std::string> inside;
  for (const auto& path : protected_paths)
    if (path != dir && under(path, dir)) inside.push_back(path);
  if (inside.empty()) return rules.allow_fd(dir_fd, dir, read_write_rights(rules.fs()));
  if (auto error = rules.allow_fd(dir_fd, dir, kFsRead | kFsMake)) return error;
  int list_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* listing = list_fd < 0 ? nullptr : fdopendir(list_fd);
  if (listing == nullptr) {
    int err = errno;
    if (list_fd >= 0) close(list_fd);
    return setup_error("landlock", err, "list " + dir);
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(listing);
  for (const auto& name : names) {
    std::string child = dir + (dir == "/" ? "" : "/") + name;
    if (std::find(inside.begin(), inside.end(), child) != inside.end()) continue;  // read-only
    UniqueFd child_fd(openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!child_fd.valid() || fstat(child_fd.get(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (S_ISDIR(st.st_mode)) {
      if (auto error = allow_read_write_around(rules, child_fd.get(), child, inside)) return error;
    } else if (auto error = rules.allow_fd(child_fd.get(), child, read_write_rights(rules.fs()))) {
      return error;
    }
  }
  return std::nullopt;
}

// The same for a read-write path of the policy, opened as the rules open every path.
std::optional<SetupError> allow_read_write(Ruleset& rules, const std::string& dir,
                                           const std::vector<std::string>& protected_paths) {
  auto opened = rules.open_rule_path(dir);
  if (!opened.ok()) return setup_error("landlock", -opened.error().code, opened.error().message);
  return allow_read_write_around(rules, opened->get(), dir, protected_paths);
}

}  // namespace

int landlock_abi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::string landlock_features(int abi) {
  if (abi < 1) return "none";
  std::string out = "fs";
  if (abi >= 2) out += " refer";
  if (abi >= 3) out += " truncate";
  if (abi >= 4) out += " net_tcp";
  if (abi >= 5) out += " ioctl_dev";
  if (abi >= 6) out += " scope_signal scope_abstract_unix";
  return out;
}

LandlockView landlock_view(const SandboxPolicy& policy) {
  LandlockView view;
  if (policy.system_view) {
    view.read_only = system_view_paths();
    // The namespace lockbox writes a minimal passwd and group; here the host's are read (a
    // program such as initdb must find its own uid): every account name shows.
    view.read_only.insert(view.read_only.end(), {"/etc/passwd", "/etc/group"});
  }
  view.read_only.emplace_back("/proc");
  for (const char* device : kDevices) view.read_write.emplace_back(device);
  return view;
}

std::optional<SetupError> check_landlock_policy(const SandboxPolicy& policy) {
  for (const auto* list : {&policy.read_only, &policy.read_write})
    for (const auto& bind : *list)
      if (!bind.dest.empty() && bind.dest != bind.source)
        return setup_error("landlock", EINVAL,
                           bind.source + " cannot be shown at " + bind.dest +
                               " without a mount namespace (the landlock backend shows every "
                               "path where it is on the host)");
  if (!policy.tmpfs.empty())
    return setup_error("landlock", EINVAL,
                       "a tmpfs at " + policy.tmpfs.front() +
                           " needs a mount namespace (not available with the landlock backend)");
  return std::nullopt;
}

std::optional<SetupError> make_landlock_ruleset(const SandboxPolicy& policy, int* ruleset_fd) {
  *ruleset_fd = -1;
  if (auto error = check_landlock_policy(policy)) return error;
  int abi = landlock_abi();
  if (abi < 1)
    return setup_error("landlock", ENOSYS,
                       "this kernel offers no Landlock (not built in, or not in the lsm= boot "
                       "list): the landlock backend cannot run here");
  RulesetAttr attr{};
  attr.handled_access_fs = handled_fs(abi);
  size_t size = sizeof attr.handled_access_fs;
  if (abi >= 4 && policy.network != NetworkMode::host) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = offsetof(RulesetAttr, scoped);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    size = sizeof attr;
  }
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (fd < 0) return setup_error("landlock", errno, "create the ruleset");
  fcntl(fd, F_SETFD, FD_CLOEXEC);  // already O_CLOEXEC by the kernel; stated for the reader
  auto roots = ConfinedRoots::open(policy);
  if (!roots.ok()) {
    close(fd);
    return setup_error("landlock", -roots.error().code, roots.error().message);
  }
  Ruleset rules(fd, abi, std::move(*roots));

  std::vector<std::string> read_only_paths;
  for (const auto& bind : policy.read_only) read_only_paths.push_back(bind.source);
  LandlockView view = landlock_view(policy);
  for (const auto& path : view.read_only)
    if (auto error = rules.allow_path(path, kFsRead, true)) return error;
  for (const auto& path : view.read_write)
    if (auto error = rules.allow_path(
            path, kFsRead | kFsIoctlDev | LANDLOCK_ACCESS_FS_WRITE_FILE | kFsTruncate, true))
      return error;
  for (const auto& path : read_only_paths)
    if (auto error = rules.allow_path(path, kFsRead, false)) return error;
  for (const auto& bind : policy.read_write)
    if (auto error = allow_read_write(rules, bind.source, read_only_paths)) return error;
  if (!policy.host_tmp_dir.empty())
    if (auto error = allow_read_write(rules, policy.host_tmp_dir, read_only_paths)) return error;

  if (attr.handled_access_net != 0 && policy.network == NetworkMode::localhost) {
    // A served port is the block's own: its processes (and its exec health check) may also
    // connect to it, as inside a network namespace of its own.
    for (int port : policy.tcp_bind)
      if (auto error = rules.allow_port(port, kNetBindTcp | kNetConnectTcp)) return error;
    for (int port : policy.tcp_connect)
      if (auto error = rules.allow_port(port, kNetConnectTcp)) return error;
  }
  *ruleset_fd = rules.release();
  return std::nullopt;
}

}  // namespace stackie::linux_sandbox
