#include "sandbox/linux_rootfs.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>

#include "base/safe_open.h"
#include "sandbox/confined_roots.h"

namespace stackie::linux_sandbox {

const std::vector<std::string>& system_view_paths() {
  return stackie::system_view_paths();  // policy/policy.h: shared with `stackie validate`
}

namespace {

using MaybeError = std::optional<SetupError>;

#define LOCKBOX_TRY(expr)                                          \
  do {                                                             \
    if (MaybeError lockbox_error_ = (expr)) return lockbox_error_; \
  } while (0)

// One thing to put into the new root.
struct Entry {
  enum Kind { bind, tmpfs, symlink } kind = bind;
  std::string source;  // bind: host path; symlink: the link's text
  std::string target;  // absolute, inside
  bool read_only = true;
  bool optional = false;     // system view: skip when absent on the host
  int tree = -1;             // bind: detached clone of the source (open_tree)
  uint64_t tmpfs_bytes = 0;  // tmpfs: its size (0 = the kernel's default)
};

// The new mount API keeps a bind detached until it is complete: the clone is made read-only,
// nosuid and nodev *before* it becomes visible, recursively (submounts too), and only flags are
// added, never cleared, so the kernel's locked flags (nosuid/nodev/noexec/atime of a mount we
// do not own) are kept as they are. A legacy MS_REMOUNT would have to restate them exactly.
int clone_tree(const char* path, bool recursive) {
  return static_cast<int>(
      syscall(SYS_open_tree, AT_FDCWD, path,
              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0)));
}

int set_attrs(int fd, const char* path, uint64_t attrs, bool recursive) {
  mount_attr attr{};
  attr.attr_set = attrs;
  unsigned flags = (path[0] ? 0 : AT_EMPTY_PATH) | (recursive ? AT_RECURSIVE : 0);
  return static_cast<int>(syscall(SYS_mount_setattr, fd, path, flags, &attr, sizeof attr));
}

int attach(int tree, int parent, const char* name) {
  return static_cast<int>(syscall(SYS_move_mount, tree, "", parent, name, MOVE_MOUNT_F_EMPTY_PATH));
}

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The new root, and safe creation of mount targets inside it.
class NewRoot {
 public:
  MaybeError mount_at(const char* host_dir) {
    if (mount("tmpfs", host_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
      return setup_error("mount /", errno, std::string("tmpfs on ") + host_dir);
    root_ = Fd(open(host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat st;
    if (root_.get() < 0 || fstat(root_.get(), &st) != 0)
      return setup_error("mount /", errno, "open the new root");
    own_devs_.push_back(st.st_dev);
    return std::nullopt;
  }
  // A tmpfs we mounted: creating mount targets on it writes nothing to the host.
  void adopt(int fd) {
    struct stat st;
    if (fstat(fd, &st) == 0) own_devs_.push_back(st.st_dev);
  }
  // The block's own scratch directory bound as /tmp (host_tmp_dir): mount targets of policy
  // paths under /tmp may be created in it (it belongs to this block alone; nothing else of the
  // host is written). Identified by mount id, not device: the device is the host's file system.
  MaybeError adopt_scratch_mount(int fd) {
    struct statx stx {};
    if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID))
      return setup_error("mount /tmp", errno ? errno : ENOSYS, "identify the /tmp mount");
    scratch_mounts_.push_back(stx.stx_mnt_id);
    return std::nullopt;
  }
  int fd() const { return root_.get(); }

  // Opens the parent directory of `target` (absolute, inside), creating missing directories.
  // Every lookup is confined to the new root (RESOLVE_IN_ROOT: a symlink inside a bound
  // directory cannot lead out), and a directory is only created on our own tmpfs, never inside
  // a bound host directory (that would write to the host).
  MaybeError open_parent(const std::string& target, Fd* parent, std::string* last) {
    size_t slash = target.find_last_of('/');
    *last = target.substr(slash + 1);
    Fd current(dup(root_.get()));
    size_t start = 1;
    while (start < slash + 1 && slash > 0) {
      size_t end = target.find('/', start);
      std::string name = target.substr(start, end - start);
      LOCKBOX_TRY(make_node(current.get(), name, true, target.substr(0, end)));
      Fd next(open_in_root(target.substr(1, end - 1), O_PATH | O_DIRECTORY));
      if (next.get() < 0)
        return setup_error("mount " + target, errno, "open " + target.substr(0, end));
      current = std::move(next);
      start = end + 1;
    }
    *parent = std::move(current);
    return std::nullopt;
  }

  // Creates `name` in `parent` (a directory or an empty file) unless it exists.
  MaybeError make_node(int parent, const std::string& name, bool directory,
                       const std::string& path) {
    struct stat st;
    if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      // A link we made ourselves (/bin -> usr/bin) is fine on the way; RESOLVE_IN_ROOT keeps it
      // inside. A final target that is a symlink is refused by move_mount's no-follow.
      return std::nullopt;
    }
    if (!on_our_tmpfs(parent))
      return setup_error("mount " + path, ENOENT,
                         path +
                             " does not exist inside a bound directory; it is not created "
                             "on the host");
    int rc = directory ? mkdirat(parent, name.c_str(), 0755) : -1;
    if (!directory) {
      int fd =
          openat(parent, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
      rc = fd < 0 ? -1 : close(fd);
    }
    if (rc != 0 && errno != EEXIST) return setup_error("mount " + path, errno, "create " + path);
    return std::nullopt;
  }

  Fd open_in_root_fd(const std::string& target, int flags) {
    return Fd(open_in_root(target.substr(1), flags));
  }

  // Writes a new file `target` with `text`, only on our own tmpfs and never over an existing
  // file. Inside a directory the policy bound from the host, nothing is written (the host's
  // file shows, as the policy asked).
  MaybeError write_new_file(const std::string& target, const std::string& text) {
    Fd parent;
    std::string name;
    LOCKBOX_TRY(open_parent(target, &parent, &name));
    Fd dir(openat(parent.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return setup_error("write " + target, errno, "open the parent");
    if (!on_our_tmpfs(dir.get())) return std::nullopt;
    Fd file(openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0644));
    if (file.get() < 0) return setup_error("write " + target, errno, "create " + target);
    if (write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      return setup_error("write " + target, errno, "write " + target);
    return std::nullopt;
  }

 private:
  int open_in_root(const std::string& relative, int flags) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(syscall(SYS_openat2, root_.get(),
                                    relative.empty() ? "." : relative.c_str(), &how, sizeof how));
  }
  bool on_our_tmpfs(int dir) {
    struct stat st;
    if (fstat(dir, &st) == 0 &&
        std::find(own_devs_.begin(), own_devs_.end(), st.st_dev) != own_devs_.end())
      return true;
    struct statx stx {};
    return !scratch_mounts_.empty() && statx(dir, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 &&
           (stx.stx_mask & STATX_MNT_ID) &&
           std::find(scratch_mounts_.begin(), scratch_mounts_.end(), stx.stx_mnt_id) !=
               scratch_mounts_.end();
  }

  Fd root_;
  std::vector<dev_t> own_devs_;
  std::vector<uint64_t> scratch_mounts_;
};

size_t depth(const std::string& path) {
  return std::count(path.begin(), path.end(), '/');
}

// The policy as an ordered list of entries: system view first, then the policy's own mounts,
// parents before children. /tmp, /dev and /proc are handled by build_root_and_pivot.
std::vector<Entry> plan_entries(const SandboxPolicy& policy) {
  std::vector<Entry> user;
  for (const auto& bind : policy.read_only)
    user.push_back({Entry::bind, bind.source, bind.target(), true, false, -1});
  for (const auto& bind : policy.read_write)
    user.push_back({Entry::bind, bind.source, bind.target(), false, false, -1});
  for (const auto& dest : policy.tmpfs)
    user.push_back({Entry::tmpfs, "", dest, false, false, -1, policy.limits.memory_bytes});
  std::stable_sort(user.begin(), user.end(), [](const Entry& a, const Entry& b) {
    return depth(a.target) < depth(b.target);
  });

  auto overridden = [&](const std::string& path) {
    return std::any_of(user.begin(), user.end(), [&](const Entry& e) { return e.target == path; });
  };
  std::vector<Entry> entries;
  if (policy.system_view) {
    for (const auto& path : system_view_paths()) {
      if (overridden(path)) continue;
      // The block's own /etc/hosts is written below (names of the blocks it consumes).
      if (path == "/etc/hosts" && !policy.host_names.empty()) continue;
      struct stat st;
      if (lstat(path.c_str(), &st) != 0) continue;  // not on this host
      if (S_ISLNK(st.st_mode)) {
        char link[4096];
        ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
        if (n <= 0) continue;
        entries.push_back(
            {Entry::symlink, std::string(link, static_cast<size_t>(n)), path, true, true, -1});
      } else {
        entries.push_back({Entry::bind, path, path, true, true, -1});
      }
    }
  }
  entries.insert(entries.end(), user.begin(), user.end());
  return entries;
}

int clone_tree_at(int fd) {
  return static_cast<int>(syscall(
      SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
}

// A bind source below a directory the block can write (its storage, a project) is opened from
// that directory with no link on the way and bound from what was opened (confined_roots.h).
MaybeError clone_source(Entry& entry, const ConfinedRoots& roots) {
  auto opened = roots.open_path(entry.source);
  if (!opened.ok()) {
    if (entry.optional && opened.error().code == -ENOENT) return std::nullopt;
    int err = -opened.error().code;
    const std::string& message = opened.error().message;
    return setup_error("mount " + entry.target, err,
                       message == entry.source ? "bind " + entry.source : message);
  }
  entry.tree = clone_tree_at(opened->get());
  if (entry.tree < 0) {
    if (entry.optional && errno == ENOENT) return std::nullopt;
    return setup_error("mount " + entry.target, errno, "bind " + entry.source);
  }
  uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (entry.read_only ? MOUNT_ATTR_RDONLY : 0);
  if (set_attrs(entry.tree, "", attrs, true) != 0)
    return setup_error("mount " + entry.target, errno,
                       std::string("make ") + (entry.read_only ? "read-only" : "nosuid/nodev") +
                           ": " + entry.source);
  return std::nullopt;
}

// A writable tmpfs of the block holds at most its memory limit (tmpfs pages escape
// RLIMIT_DATA); without one, the kernel's default (half of RAM).
std::string tmpfs_size(uint64_t bytes) {
  if (bytes == 0) return "";
  return ",size=" + std::to_string(bytes);
}

MaybeError mount_fs(int target_fd, const char* type, unsigned long flags, const char* data,
                    const std::string& where) {
  if (mount(type, fd_path(target_fd).c_str(), type, flags, data) != 0)
    return setup_error("mount " + where, errno, std::string(type) + " on " + where);
  return std::nullopt;
}

MaybeError place(NewRoot& root, Entry& entry) {
  Fd parent;
  std::string name;
  LOCKBOX_TRY(root.open_parent(entry.target, &parent, &name));
  if (entry.kind == Entry::symlink) {
    if (symlinkat(entry.source.c_str(), parent.get(), name.c_str()) != 0 && errno != EEXIST)
      return setup_error("symlink " + entry.target, errno, "symlink " + entry.target);
    return std::nullopt;
  }
  bool directory = true;
  if (entry.kind == Entry::bind) {
    if (entry.tree < 0) return std::nullopt;  // optional and absent
    struct stat st;
    if (fstat(entry.tree, &st) != 0) return setup_error("mount " + entry.target, errno, "stat");
    directory = S_ISDIR(st.st_mode);
  }
  LOCKBOX_TRY(root.make_node(parent.get(), name, directory, entry.target));
  if (entry.kind == Entry::bind) {
    if (attach(entry.tree, parent.get(), name.c_str()) != 0)
      return setup_error("mount " + entry.target, errno, "attach " + entry.source);
    return std::nullopt;
  }
  Fd target = root.open_in_root_fd(entry.target, O_PATH | O_DIRECTORY);
  if (target.get() < 0) return setup_error("mount " + entry.target, errno, "open target");
  std::string options = "mode=0755" + tmpfs_size(entry.tmpfs_bytes);
  LOCKBOX_TRY(mount_fs(target.get(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str(), entry.target));
  root.adopt(root.open_in_root_fd(entry.target, O_PATH | O_DIRECTORY).get());
  return std::nullopt;
}

// A minimal /dev: the harmless character devices bound from the host (an unprivileged user
// cannot mknod), a new devpts instance (ptys of the sandbox only), /dev/shm, the usual links.
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};

struct DeviceClones {
  int fds[sizeof kDevices / sizeof kDevices[0]];
};

MaybeError clone_devices(DeviceClones* clones) {
  for (size_t i = 0; i < sizeof kDevices / sizeof kDevices[0]; ++i) {
    std::string host = std::string("/dev/") + kDevices[i];
    clones->fds[i] = clone_tree(host.c_str(), false);
    if (clones->fds[i] < 0) return setup_error("mount /dev", errno, "bind " + host);
    // nodev would make the node useless; it is a single device node, nothing to gain.
    if (set_attrs(clones->fds[i], "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false) != 0)
      return setup_error("mount /dev", errno, "nosuid " + host);
  }
  return std::nullopt;
}

MaybeError build_dev(NewRoot& root, DeviceClones& clones, uint64_t shm_bytes) {
  Fd parent;
  std::string name;
  LOCKBOX_TRY(root.open_parent("/dev", &parent, &name));
  LOCKBOX_TRY(root.make_node(parent.get(), name, true, "/dev"));
  Fd target = root.open_in_root_fd("/dev", O_PATH | O_DIRECTORY);
  LOCKBOX_TRY(mount_fs(target.get(), "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m", "/dev"));
  Fd dev = root.open_in_root_fd("/dev", O_PATH | O_DIRECTORY);
  if (dev.get() < 0) return setup_error("mount /dev", errno, "open /dev");
  root.adopt(dev.get());
  for (size_t i = 0; i < sizeof kDevices / sizeof kDevices[0]; ++i) {
    LOCKBOX_TRY(root.make_node(dev.get(), kDevices[i], false, std::string("/dev/") + kDevices[i]));
    if (attach(clones.fds[i], dev.get(), kDevices[i]) != 0)
      return setup_error("mount /dev", errno, std::string("attach /dev/") + kDevices[i]);
  }
  if (mkdirat(dev.get(), "pts", 0755) != 0 || mkdirat(dev.get(), "shm", 01777) != 0)
    return setup_error("mount /dev", errno, "create /dev/pts and /dev/shm");
  // POSIX shared memory (postgres's dynamic shared memory lives here): a tmpfs of its own,
  // private to the sandbox, not the 1 MiB /dev. Sized by the block's limits (64 MiB or its
  // memory limit by default), not the kernel's default of half of RAM: tmpfs pages count
  // against no rlimit, so an unsized /dev/shm would be a way around the memory limit.
  Fd shm = root.open_in_root_fd("/dev/shm", O_PATH | O_DIRECTORY);
  std::string shm_options = "mode=1777,size=" + std::to_string(shm_bytes);
  LOCKBOX_TRY(mount_fs(shm.get(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, shm_options.c_str(),
                       "/dev/shm"));
  Fd pts = root.open_in_root_fd("/dev/pts", O_PATH | O_DIRECTORY);
  LOCKBOX_TRY(mount_fs(pts.get(), "devpts", MS_NOSUID | MS_NOEXEC,
                       "newinstance,ptmxmode=0666,mode=620", "/dev/pts"));
  const std::pair<const char*, const char*> links[] = {{"pts/ptmx", "ptmx"},
                                                       {"/proc/self/fd", "fd"},
                                                       {"/proc/self/fd/0", "stdin"},
                                                       {"/proc/self/fd/1", "stdout"},
                                                       {"/proc/self/fd/2", "stderr"}};
  for (const auto& [text, link] : links) {
    if (symlinkat(text, dev.get(), link) != 0)
      return setup_error("mount /dev", errno, std::string("symlink /dev/") + link);
  }
  return std::nullopt;
}

// A new /proc for the new pid namespace; the kernel-tuning parts read-only (they are owned by
// the host's root anyway, this is the second lock).
MaybeError build_proc(NewRoot& root) {
  Fd parent;
  std::string name;
  LOCKBOX_TRY(root.open_parent("/proc", &parent, &name));
  LOCKBOX_TRY(root.make_node(parent.get(), name, true, "/proc"));
  Fd target = root.open_in_root_fd("/proc", O_PATH | O_DIRECTORY);
  LOCKBOX_TRY(mount_fs(target.get(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr, "/proc"));
  Fd proc = root.open_in_root_fd("/proc", O_PATH | O_DIRECTORY);
  for (const char* covered : {"sys", "sysrq-trigger", "irq", "bus", "fs"}) {
    int tree = static_cast<int>(syscall(SYS_open_tree, proc.get(), covered,
                                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
    if (tree < 0) {
      if (errno == ENOENT) continue;
      return setup_error("mount /proc", errno, std::string("bind /proc/") + covered);
    }
    Fd owner(tree);
    if (set_attrs(tree, "",
                  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                  true) != 0 ||
        attach(tree, proc.get(), covered) != 0)
      return setup_error("mount /proc", errno, std::string("read-only /proc/") + covered);
  }
  return std::nullopt;
}

MaybeError build_tmp(NewRoot& root, const SandboxPolicy& policy, Entry* host_tmp) {
  Fd parent;
  std::string name;
  LOCKBOX_TRY(root.open_parent("/tmp", &parent, &name));
  LOCKBOX_TRY(root.make_node(parent.get(), name, true, "/tmp"));
  if (!policy.host_tmp_dir.empty()) {
    if (attach(host_tmp->tree, parent.get(), name.c_str()) != 0)
      return setup_error("mount /tmp", errno, "attach " + policy.host_tmp_dir);
    Fd mounted = root.open_in_root_fd("/tmp", O_PATH | O_DIRECTORY);
    if (mounted.get() < 0) return setup_error("mount /tmp", errno, "open the bound /tmp");
    return root.adopt_scratch_mount(mounted.get());
  }
  Fd target = root.open_in_root_fd("/tmp", O_PATH | O_DIRECTORY);
  std::string options = "mode=1777" + tmpfs_size(policy.limits.memory_bytes);
  LOCKBOX_TRY(mount_fs(target.get(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str(), "/tmp"));
  // Policy paths under /tmp (an ephemeral stack's volumes) get their mount targets made on
  // this private tmpfs, which writes nothing to the host.
  Fd mounted = root.open_in_root_fd("/tmp", O_PATH | O_DIRECTORY);
  if (mounted.get() < 0) return setup_error("mount /tmp", errno, "open the private /tmp");
  root.adopt(mounted.get());
  return std::nullopt;
}

// The first id of /proc/self/{uid,gid}_map's first line on the host's side ("0 1000 1": 1000).
long outside_id(const char* map) {
  char text[128] = {};
  Fd fd(open(map, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 || read(fd.get(), text, sizeof text - 1) <= 0) return -1;
  long inside = -1, outside = -1;
  return std::sscanf(text, "%ld %ld", &inside, &outside) == 2 ? outside : -1;
}

// The name of `id` in the host's /etc/passwd or /etc/group (field 3), empty when none: the
// caller's own entry only, nobody else's.
std::string host_name_of(const char* file, long id) {
  FILE* in = std::fopen(file, "re");
  if (in == nullptr || id < 0) {
    if (in) std::fclose(in);
    return "";
  }
  std::string found;
  char line[1024];
  while (found.empty() && std::fgets(line, sizeof line, in)) {
    std::string entry(line);
    size_t first = entry.find(':');
    size_t second = first == std::string::npos ? first : entry.find(':', first + 1);
    size_t third = second == std::string::npos ? second : entry.find(':', second + 1);
    if (third == std::string::npos) continue;
    if (entry.substr(second + 1, third - second - 1) == std::to_string(id))
      found = entry.substr(0, first);
  }
  std::fclose(in);
  return found;
}

// Every account name of the host would be visible through a bound /etc/passwd (issue 14); the
// block gets a minimal one instead: root, the caller under its own name (tools such as
// `id -un` and postgres's peer authentication look it up), nobody. Read from the host before
// the pivot, so only the caller's own entry is taken.
struct Accounts {
  std::string passwd, group;
};

Accounts plan_accounts() {
  uid_t uid = getuid();
  gid_t gid = getgid();
  Accounts out;
  out.passwd = "root:x:0:0:root:/root:/bin/sh\n";
  out.group = "root:x:0:\n";
  if (uid != 0) {
    std::string name = host_name_of("/etc/passwd", outside_id("/proc/self/uid_map"));
    if (name.empty() || name == "root" || name == "nobody") name = "stackie";
    out.passwd += name + ":x:" + std::to_string(uid) + ":" + std::to_string(gid) + "::/:/bin/sh\n";
  }
  if (gid != 0) {
    std::string name = host_name_of("/etc/group", outside_id("/proc/self/gid_map"));
    if (name.empty() || name == "root" || name == "nogroup") name = "stackie";
    out.group += name + ":x:" + std::to_string(gid) + ":\n";
  }
  out.passwd += "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
  out.group += "nogroup:x:65534:\n";
  return out;
}

bool policy_mounts(const std::vector<Entry>& entries, const char* target) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const Entry& e) { return e.target == target; });
}

}  // namespace

MaybeError build_root_and_pivot(const SandboxPolicy& policy) {
  // Nothing we mount propagates back to the host, host unmounts still reach us.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return setup_error("mount --make-rslave /", errno, "make / a slave");

  // 1. Clone every source while the host's tree is still in view: the tmpfs root below is
  //    mounted over a host directory and would hide sources under it.
  std::vector<Entry> entries = plan_entries(policy);
  struct Closer {
    std::vector<Entry>& entries;
    ~Closer() {
      for (auto& e : entries)
        if (e.tree >= 0) close(e.tree);
    }
  } closer{entries};
  auto roots = ConfinedRoots::open(policy);
  if (!roots.ok())
    return setup_error("open writable dirs", -roots.error().code, roots.error().message);
  for (auto& entry : entries) {
    if (entry.kind == Entry::bind) LOCKBOX_TRY(clone_source(entry, *roots));
  }
  bool own_tmp = !policy_mounts(entries, "/tmp");
  bool own_dev = !policy_mounts(entries, "/dev");
  bool own_proc = !policy_mounts(entries, "/proc");
  Entry host_tmp{Entry::bind, policy.host_tmp_dir, "/tmp", false, false, -1};
  Fd host_tmp_owner;
  if (own_tmp && !policy.host_tmp_dir.empty()) {
    LOCKBOX_TRY(clone_source(host_tmp, *roots));
    host_tmp_owner = Fd(host_tmp.tree);
  }
  DeviceClones devices{};
  std::fill(std::begin(devices.fds), std::end(devices.fds), -1);
  struct DevCloser {
    DeviceClones& d;
    ~DevCloser() {
      for (int fd : d.fds)
        if (fd >= 0) close(fd);
    }
  } dev_closer{devices};
  if (own_dev) LOCKBOX_TRY(clone_devices(&devices));

  Accounts accounts = plan_accounts();  // the host's /etc is still in view here

  // 2. The root: a tmpfs over /tmp of this (private) mount namespace.
  NewRoot root;
  LOCKBOX_TRY(root.mount_at("/tmp"));
  // The private /tmp first: a policy path under /tmp must land on top of it, not under it.
  if (own_tmp) LOCKBOX_TRY(build_tmp(root, policy, &host_tmp));
  for (auto& entry : entries) LOCKBOX_TRY(place(root, entry));
  if (own_dev) {
    const ResourceLimits& limits = policy.limits;
    uint64_t shm = limits.shm_bytes ? limits.shm_bytes : default_shm_bytes(limits.memory_bytes);
    LOCKBOX_TRY(build_dev(root, devices, shm));
  }
  if (own_proc) LOCKBOX_TRY(build_proc(root));
  if (policy.system_view) {
    if (!policy_mounts(entries, "/etc/passwd"))
      LOCKBOX_TRY(root.write_new_file("/etc/passwd", accounts.passwd));
    if (!policy_mounts(entries, "/etc/group"))
      LOCKBOX_TRY(root.write_new_file("/etc/group", accounts.group));
    if (!policy.host_names.empty() && !policy_mounts(entries, "/etc/hosts"))
      LOCKBOX_TRY(root.write_new_file("/etc/hosts", hosts_file_text(policy)));
  }
  // The root itself read-only: the block cannot plant files next to /usr.
  if (set_attrs(root.fd(), "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false))
    return setup_error("mount /", errno, "make the root read-only");

  // 3. pivot_root(".", "."): the old root ends up stacked under the new one and is detached
  //    at once, with no directory for it in the new tree (see pivot_root(2), NOTES).
  if (fchdir(root.fd()) != 0) return setup_error("pivot_root", errno, "chdir to the new root");
  if (syscall(SYS_pivot_root, ".", ".") != 0) return setup_error("pivot_root", errno, "pivot_root");
  if (umount2(".", MNT_DETACH) != 0) return setup_error("pivot_root", errno, "detach old root");
  if (chdir("/") != 0) return setup_error("pivot_root", errno, "chdir /");
  std::string dir = policy.working_dir.empty() ? "/" : policy.working_dir;
  if (chdir(dir.c_str()) != 0)
    return setup_error("chdir", errno, "working directory " + dir + " inside the sandbox");
  return std::nullopt;
}

}  // namespace stackie::linux_sandbox
