// Isolation properties of the Linux lockbox (issue 3): each test would fail on a weaker sandbox.
// The syscall probes also run *outside* the lockbox as a control: the kernel alone answers
// differently, so EPERM/ENOSYS inside is the filter's doing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/sandbox_probe.h"
#include "lockbox_harness.h"

namespace stackie::testing {
namespace {

class Lockbox : public ::testing::Test {
 protected:
  void SetUp() override { STACKIE_REQUIRE_UNPRIVILEGED(); }
  std::string probe(const std::vector<std::string>& args,
                    const std::vector<std::string>& flags = {}) {
    RunResult r = run_probe(flags, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return trim(r.out);
  }
};

struct SyscallCase {
  const char* probe;
  const char* inside;  // errno name expected inside
};

class LockboxSyscall : public ::testing::TestWithParam<SyscallCase> {
 protected:
  void SetUp() override { STACKIE_REQUIRE_UNPRIVILEGED(); }
};

TEST_P(LockboxSyscall, RefusedInsideButNotByTheKernelAlone) {
  RunResult inside = run_probe({}, {GetParam().probe});
  ASSERT_EQ(inside.exit_code, 0) << inside.err;
  EXPECT_EQ(trim(inside.out), GetParam().inside);
  RunResult outside = run({probe_path(), GetParam().probe});
  EXPECT_NE(trim(outside.out), GetParam().inside) << "control run outside the sandbox";
}

INSTANTIATE_TEST_SUITE_P(
    Seccomp, LockboxSyscall,
    ::testing::Values(SyscallCase{"keyctl", "EPERM"}, SyscallCase{"add_key", "EPERM"},
                      SyscallCase{"request_key", "EPERM"}, SyscallCase{"bpf", "EPERM"},
                      SyscallCase{"perf_event_open", "EPERM"}, SyscallCase{"userfaultfd", "EPERM"},
                      SyscallCase{"io_uring_setup", "EPERM"}, SyscallCase{"mount", "EPERM"},
                      SyscallCase{"umount2", "EPERM"}, SyscallCase{"chroot", "EPERM"},
                      SyscallCase{"setns", "EPERM"}, SyscallCase{"unshare-user", "EPERM"},
                      SyscallCase{"clone-newuser", "EPERM"}, SyscallCase{"clone3", "ENOSYS"},
                      SyscallCase{"fsopen", "ENOSYS"}, SyscallCase{"open_tree", "ENOSYS"},
                      SyscallCase{"move_mount", "ENOSYS"}, SyscallCase{"mount_setattr", "ENOSYS"},
                      SyscallCase{"ptrace", "EPERM"}, SyscallCase{"process_vm_readv", "EPERM"},
                      SyscallCase{"tiocsti", "EPERM"}, SyscallCase{"tiocsti-highbits", "EPERM"},
                      SyscallCase{"tioclinux", "EPERM"}, SyscallCase{"x32-keyctl", "EPERM"}),
    [](const auto& param_info) {
      std::string name = param_info.param.probe;
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

TEST_F(Lockbox, PivotRootRefused) {
  EXPECT_EQ(probe({"pivot_root"}), "EPERM");
}
TEST_F(Lockbox, MknodRefused) {
  if (!landlock_backend()) {
    EXPECT_EQ(probe({"mknod"}), "EPERM");
    return;
  }
  // Landlock: /tmp is the host's and closed; in a writable directory (where Landlock allows
  // making a device node) the kernel still refuses it without CAP_MKNOD.
  testing::TempDir dir;
  EXPECT_EQ(probe({"mknod", dir / "node"}, {"--rw", dir.path()}), "EPERM");
  EXPECT_EQ(probe({"mknod"}), "EACCES");
}

TEST_F(Lockbox, HostFileOutsideThePolicyIsInvisible) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  std::ofstream(dir + "/secret") << "x";
  if (landlock_backend()) {
    // Landlock does not mediate stat(2): a path's existence shows, its content does not.
    EXPECT_EQ(probe({"read", dir + "/secret"}), "EACCES");
    EXPECT_EQ(probe({"list", dir}), "EACCES");
    EXPECT_EQ(probe({"list", "/home"}), "EACCES");
    EXPECT_EQ(probe({"list", "/etc"}), "EACCES");
    EXPECT_EQ(probe({"read", dir + "/secret"}, {"--ro", dir}), "x");  // control
    STACKIE_SKIP_UNDER_LANDLOCK("a path outside the policy exists (stat) but cannot be read");
  }
  EXPECT_EQ(probe({"exists", dir + "/secret"}), "ENOENT");
  EXPECT_EQ(probe({"exists", "/home"}), "ENOENT");
  EXPECT_EQ(probe({"exists", "/etc/shadow"}), "ENOENT");
}

// The host's account list is not shown (issue 14): a minimal /etc/passwd and /etc/group with
// root, the caller under its own name, and nobody.
TEST_F(Lockbox, AccountsAreMinimalNotTheHosts) {
  std::ifstream host("/etc/passwd");
  std::string host_text((std::istreambuf_iterator<char>(host)), std::istreambuf_iterator<char>());
  ASSERT_NE(host_text.find("\ndaemon:"), std::string::npos) << "this host has no 'daemon' account";
  if (landlock_backend()) {
    EXPECT_EQ(probe({"write", "/etc/passwd"}), "EACCES");
    STACKIE_SKIP_UNDER_LANDLOCK("the host's /etc/passwd and /etc/group are shown (read-only)");
  }
  std::string passwd = probe({"read", "/etc/passwd"});
  EXPECT_EQ(passwd.rfind("root:x:0:0:", 0), 0u) << passwd;
  EXPECT_EQ(passwd.find("daemon:"), std::string::npos) << passwd;
  EXPECT_NE(passwd.find("\nnobody:x:65534:"), std::string::npos) << passwd;
  std::string group = probe({"read", "/etc/group"});
  EXPECT_EQ(group.rfind("root:x:0:", 0), 0u) << group;
  EXPECT_EQ(group.find("daemon:"), std::string::npos) << group;

  // With identity user, the caller's own uid has its own name from the host.
  std::string mine = probe({"read", "/etc/passwd"}, {"--identity", "user"});
  std::string me = ":x:" + std::to_string(getuid()) + ":" + std::to_string(getgid()) + ":";
  EXPECT_NE(mine.find(me), std::string::npos) << mine;
  EXPECT_EQ(mine.find("daemon:"), std::string::npos) << mine;
  EXPECT_EQ(probe({"write", "/etc/passwd"}), "EROFS");
}

TEST_F(Lockbox, SysIsNotMounted) {
  if (landlock_backend()) {
    EXPECT_EQ(probe({"list", "/sys/kernel"}), "EACCES");
    EXPECT_EQ(probe({"read", "/sys/kernel/uevent_seqnum"}), "EACCES");
    STACKIE_SKIP_UNDER_LANDLOCK("/sys exists (stat) but cannot be read");
  }
  EXPECT_EQ(probe({"exists", "/sys/kernel"}), "ENOENT");
}

TEST_F(Lockbox, ReadOnlyPathRefusesWrites) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  if (landlock_backend()) {  // no bind to another path: the directory where it is
    std::ofstream(dir + "/f") << "x";
    EXPECT_EQ(probe({"write", dir + "/f"}, {"--ro", dir}), "EACCES");
    EXPECT_EQ(probe({"write", dir + "/new"}, {"--ro", dir}), "EACCES");
    EXPECT_EQ(probe({"write", dir + "/f"}, {"--rw", dir}), "ok");  // control
    STACKIE_SKIP_UNDER_LANDLOCK("no mount of its own: the host's mount flags (no ro/nosuid/nodev)");
  }
  EXPECT_EQ(probe({"write", "/data/f"}, {"--ro", dir + ":/data"}), "EROFS");
  EXPECT_EQ(probe({"statvfs", "/data"}, {"--ro", dir + ":/data"}), "ro nosuid nodev");
}

TEST_F(Lockbox, ReadOnlyPathRefusesRemountReadWrite) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  if (landlock_backend()) {
    EXPECT_EQ(probe({"remount-rw", dir}, {"--ro", dir}), "EPERM");
    return;
  }
  EXPECT_EQ(probe({"remount-rw", "/data"}, {"--ro", dir + ":/data"}), "EPERM");
}

TEST_F(Lockbox, ReadOnlyBindIsReadOnlyInSubmountsToo) {
  // Host /dev has submounts (pts, shm): a non-recursive read-only remount leaves them writable.
  if (landlock_backend()) {  // Landlock's rules hold beneath a path whatever is mounted there
    std::string file = "/dev/shm/stackie-probe-" + std::to_string(getpid());
    EXPECT_EQ(probe({"write", file}, {"--ro", "/dev"}), "EACCES");
    EXPECT_NE(access(file.c_str(), F_OK), 0);
    return;
  }
  EXPECT_EQ(probe({"statvfs", "/hostdev/shm"}, {"--ro", "/dev:/hostdev"}).substr(0, 2), "ro");
}

TEST_F(Lockbox, SystemViewIsReadOnlyNosuidNodev) {
  EXPECT_EQ(probe({"write", "/usr/stackie-probe"}), landlock_backend() ? "EACCES" : "EROFS");
  STACKIE_SKIP_UNDER_LANDLOCK("no mount of its own: the host's mount flags (no ro/nosuid/nodev)");
  EXPECT_EQ(probe({"statvfs", "/usr"}), "ro nosuid nodev");
}

TEST_F(Lockbox, RootIsReadOnly) {
  EXPECT_EQ(probe({"mkdir", "/planted"}), landlock_backend() ? "EACCES" : "EROFS");
}

TEST_F(Lockbox, ReadWritePathPersistsOnTheHost) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  if (landlock_backend()) {  // no bind to another path: the directory where it is
    EXPECT_EQ(probe({"write", dir + "/out"}, {"--rw", dir}), "ok");
    std::ifstream file(dir + "/out");
    std::string content;
    file >> content;
    EXPECT_EQ(content, "data");
    STACKIE_SKIP_UNDER_LANDLOCK("no mount of its own: the host's mount flags (no nosuid/nodev)");
  }
  EXPECT_EQ(probe({"write", "/data/out"}, {"--rw", dir + ":/data"}), "ok");
  std::ifstream file(dir + "/out");
  std::string content;
  file >> content;
  EXPECT_EQ(content, "data");
  EXPECT_EQ(probe({"statvfs", "/data"}, {"--rw", dir + ":/data"}), "rw nosuid nodev");
}

// The daemon binds volumes at their host path; an ephemeral stack's live under /tmp, which
// must land on top of the private /tmp, not be hidden beneath it.
TEST_F(Lockbox, ReadWritePathUnderTmpAtItsOwnPathIsVisible) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  ASSERT_EQ(dir.rfind("/tmp/", 0), 0u) << dir;
  EXPECT_EQ(probe({"write", dir + "/out"}, {"--rw", dir}), "ok");
  std::ifstream file(dir + "/out");
  std::string content;
  file >> content;
  EXPECT_EQ(content, "data");
}

TEST_F(Lockbox, MountTargetIsNeverCreatedOnTheHost) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  RunResult r = run_probe({"--rw", dir + ":/data", "--tmpfs", "/data/sub"}, {"exists", "/data"});
  EXPECT_EQ(r.exit_code, 125);
  // Landlock makes no mount at all: a bind elsewhere (or a tmpfs) is refused before anything.
  EXPECT_NE(
      r.err.find(landlock_backend() ? "without a mount namespace" : "not created on the host"),
      std::string::npos)
      << r.err;
  EXPECT_FALSE(access((dir + "/sub").c_str(), F_OK) == 0);
}

TEST_F(Lockbox, TmpfsDestinationIsFreshAndPrivate) {
  if (landlock_backend()) {  // refused, not silently left out
    RunResult r = run_probe({"--tmpfs", "/scratch"}, {"write", "/scratch/x"});
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_NE(r.err.find("a tmpfs at /scratch needs a mount namespace"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
    STACKIE_SKIP_UNDER_LANDLOCK("no --tmpfs (refused with exit 125)");
  }
  EXPECT_EQ(probe({"write", "/scratch/x"}, {"--tmpfs", "/scratch"}), "ok");
  EXPECT_EQ(probe({"list", "/scratch"}, {"--tmpfs", "/scratch"}), "");
  EXPECT_NE(access("/scratch", F_OK), 0);
}

TEST_F(Lockbox, NoCapabilityInAnySet) {
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"})
    EXPECT_EQ(probe({"status", set}), "0000000000000000") << set;
  STACKIE_SKIP_UNDER_LANDLOCK(
      "the bounding set is the host's (shrinking it needs CAP_SETPCAP); no_new_privs keeps "
      "execve from granting any of it");
  EXPECT_EQ(probe({"status", "CapBnd"}), "0000000000000000");
}

TEST_F(Lockbox, NoCapabilityWithIdentityUserEither) {
  EXPECT_EQ(probe({"status", "CapEff"}, {"--identity", "user"}), "0000000000000000");
  STACKIE_SKIP_UNDER_LANDLOCK(
      "the bounding set is the host's (shrinking it needs CAP_SETPCAP); no_new_privs keeps "
      "execve from granting any of it");
  EXPECT_EQ(probe({"status", "CapBnd"}, {"--identity", "user"}), "0000000000000000");
}

TEST_F(Lockbox, NoNewPrivs) {
  EXPECT_EQ(probe({"status", "NoNewPrivs"}), "1");
}
TEST_F(Lockbox, SeccompFilterMode) {
  EXPECT_EQ(probe({"status", "Seccomp"}), "2");
}

TEST_F(Lockbox, OnlyStdioFdsOpen) {
  int leak[2];
  ASSERT_EQ(pipe(leak), 0);
  RunOptions options;
  options.leak_fd = leak[0];
  options.with_error_fd = true;
  RunResult r = run_probe({"--error-fd", "3"}, {"fds"}, options);
  close(leak[0]);
  close(leak[1]);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trim(r.out), "0 1 2");
  EXPECT_EQ(r.error_fd, "") << "success must close the error fd without a line";
}

TEST_F(Lockbox, PassedFdSurvives) {
  int pass[2];
  ASSERT_EQ(pipe(pass), 0);
  RunOptions options;
  options.leak_fd = pass[1];
  RunResult r = run_probe({"--pass-fd", std::to_string(pass[1])}, {"fds"}, options);
  close(pass[0]);
  close(pass[1]);
  EXPECT_EQ(trim(r.out), "0 1 2 " + std::to_string(pass[1]));
}

TEST_F(Lockbox, NewSessionWithoutControllingTerminal) {
  EXPECT_EQ(probe({"session"}), "leader ENXIO");
}

TEST_F(Lockbox, HostPidsInvisible) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no pid namespace: the host's processes and their command lines show in /proc (their "
      "memory and environment do not: PidOneMemoryAndEnvironmentUnreadable)");
  std::string listing = probe({"list", "/proc"});
  EXPECT_EQ(listing.find(" " + std::to_string(getpid()) + " "), std::string::npos);
  EXPECT_LE(std::stoi(probe({"pid"})), 3) << "the block is one of the first pids of its own ns";
}

TEST_F(Lockbox, HostPidsUnsignalable) {
  if (landlock_backend() && landlock_abi_version() < 6)
    GTEST_SKIP() << "Landlock ABI < 6: signals are not scoped (stackie-lockbox(1) BACKENDS)";
  // Landlock: the process exists but is outside the block's domain (scoped signals).
  EXPECT_EQ(probe({"kill", std::to_string(getpid())}), landlock_backend() ? "EPERM" : "ESRCH");
  EXPECT_EQ(trim(run({probe_path(), "kill", std::to_string(getpid())}).out), "ok") << "control";
}

TEST_F(Lockbox, PidOneMemoryAndEnvironmentUnreadable) {
  EXPECT_EQ(probe({"proc-mem"}), "EACCES EACCES");
}

class HostListener {
 public:
  HostListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), len);
    listen(fd_, 4);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~HostListener() { close(fd_); }
  int port() const { return port_; }
  // A port nobody listens on now (bound, read, closed).
  static int free_port() {
    HostListener probe;
    return probe.port();
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(Lockbox, OnlyLoopbackWithNetNone) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no network namespace: the host's interfaces show; TCP bind and connect are refused "
      "(HostLoopbackPortUnreachable), UDP is not restricted");
  EXPECT_EQ(probe({"interfaces"}, {"--net", "none"}), "lo");
}
TEST_F(Lockbox, OnlyLoopbackWithNetLocalhost) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no network namespace: the host's interfaces show; TCP only on the --allow-bind and "
      "--allow-connect ports (HostLoopbackPortUnreachable)");
  EXPECT_EQ(probe({"interfaces"}, {"--net", "localhost"}), "lo");
}
TEST_F(Lockbox, LoopbackIsUpInside) {
  if (landlock_backend()) {  // the host's loopback, on a served port only
    std::string served = std::to_string(HostListener::free_port());
    EXPECT_EQ(probe({"listen-connect", served}, {"--net", "localhost", "--allow-bind", served}),
              "ok");
    if (landlock_abi_version() < 4) GTEST_SKIP() << "Landlock ABI < 4: no TCP rules";
    EXPECT_EQ(probe({"listen-connect", served}, {"--net", "localhost"}), "EACCES");
    return;
  }
  EXPECT_EQ(probe({"listen-connect"}), "ok");
}

TEST_F(Lockbox, HostLoopbackPortUnreachable) {
  if (landlock_backend() && landlock_abi_version() < 4)
    GTEST_SKIP() << "Landlock ABI < 4: TCP is not restricted (stackie-lockbox(1) BACKENDS)";
  HostListener listener;
  // Namespaces: nothing listens in the sandbox's own network; Landlock: the port is refused.
  std::string closed = landlock_backend() ? "EACCES" : "ECONNREFUSED";
  EXPECT_EQ(probe({"connect-port", std::to_string(listener.port())}), closed);
  EXPECT_EQ(probe({"connect-port", std::to_string(listener.port())}, {"--net", "localhost"}),
            closed);
  EXPECT_EQ(trim(run({probe_path(), "connect-port", std::to_string(listener.port())}).out), "ok")
      << "control";
}

TEST_F(Lockbox, HostNetworkModeReachesHostLoopback) {
  HostListener listener;
  EXPECT_EQ(probe({"connect-port", std::to_string(listener.port())}, {"--net", "host"}), "ok");
}

TEST_F(Lockbox, HostAbstractSocketUnreachable) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string name = "stackie-test-" + std::to_string(getpid());
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  EXPECT_EQ(trim(run({probe_path(), "abstract-socket", name}).out), "ok") << "control";
  // Landlock: socket(AF_UNIX) is refused (and ABI 6 scopes abstract sockets as well).
  EXPECT_EQ(probe({"abstract-socket", name}), landlock_backend() ? "EACCES" : "ECONNREFUSED");
  close(fd);
}

TEST_F(Lockbox, DevIsMinimal) {
  if (landlock_backend()) {  // the host's /dev: closed but for the few device nodes
    EXPECT_EQ(probe({"list", "/dev"}), "EACCES");
    EXPECT_EQ(probe({"write", "/dev/null"}), "ok");  // control
    STACKIE_SKIP_UNDER_LANDLOCK(
        "the host's /dev is there (stat) but only its "
        "null, zero, full, random, urandom and tty can be opened");
  }
  EXPECT_EQ(probe({"list", "/dev"}),
            "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero");
}

TEST_F(Lockbox, DevPtsIsANewInstance) {
  if (landlock_backend()) {  // the host's terminals are closed, none of the block's own
    EXPECT_EQ(probe({"list", "/dev/pts"}), "EACCES");
    EXPECT_EQ(probe({"write", "/dev/ptmx"}), "EACCES");
    STACKIE_SKIP_UNDER_LANDLOCK("no devpts of its own: the block cannot open a pseudo-terminal");
  }
  EXPECT_EQ(probe({"list", "/dev/pts"}), "ptmx");
}

TEST_F(Lockbox, ProcSysIsReadOnly) {
  if (landlock_backend()) {  // all of /proc is read-only to the block
    EXPECT_EQ(probe({"write", "/proc/sys/kernel/hostname"}), "EACCES");
    EXPECT_EQ(probe({"write", "/proc/self/comm"}), "EACCES");
    return;
  }
  EXPECT_EQ(probe({"statvfs", "/proc/sys"}).substr(0, 2), "ro");
  EXPECT_EQ(probe({"write", "/proc/sys/kernel/hostname"}), "EROFS");
}

TEST_F(Lockbox, SysrqTriggerNotWritable) {
  std::string got = probe({"write", "/proc/sysrq-trigger"});
  EXPECT_TRUE(got == "EROFS" || got == "EACCES" || got == "ENOENT") << got;
  EXPECT_NE(got, "ok");
}

TEST_F(Lockbox, HostnameIsTheSandboxNameAndChangesStayInside) {
  char before[256] = {};
  gethostname(before, sizeof before - 1);
  if (landlock_backend()) {  // no UTS namespace: the host's name, which it cannot change
    EXPECT_EQ(probe({"sethostname"}), std::string(before) + " EPERM");
    STACKIE_SKIP_UNDER_LANDLOCK("no UTS namespace: the block sees the host's hostname");
  }
  EXPECT_EQ(probe({"hostname"}, {"--name", "demo-db"}), "demo-db");
  EXPECT_EQ(probe({"sethostname"}).substr(0, 8), "stackie ");
  char after[256] = {};
  gethostname(after, sizeof after - 1);
  EXPECT_STREQ(before, after);
}

TEST_F(Lockbox, PrivateTmp) {
  std::string marker = "/tmp/stackie-lockbox-marker-" + std::to_string(getpid());
  std::ofstream(marker) << "x";
  if (landlock_backend()) {  // the host's /tmp, closed (TMPDIR names the block's own)
    EXPECT_EQ(probe({"read", marker}), "EACCES");
    EXPECT_EQ(probe({"write", marker}), "EACCES");
    EXPECT_EQ(probe({"write", "/tmp/inside"}), "EACCES");
    EXPECT_NE(access("/tmp/inside", F_OK), 0);
    unlink(marker.c_str());
    STACKIE_SKIP_UNDER_LANDLOCK("/tmp is the host's: its names show (stat), nothing is readable");
  }
  EXPECT_EQ(probe({"exists", marker}), "ENOENT");
  EXPECT_EQ(probe({"write", "/tmp/inside"}), "ok");
  EXPECT_NE(access("/tmp/inside", F_OK), 0);
  unlink(marker.c_str());
}

TEST_F(Lockbox, HostTmpDirBacksTmp) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  if (landlock_backend()) {  // not shown at /tmp: TMPDIR names it, and it is writable
    EXPECT_EQ(probe({"env"}, {"--tmpdir", dir}), "TMPDIR=" + dir);
    EXPECT_EQ(probe({"write", dir + "/kept"}, {"--tmpdir", dir}), "ok");
    EXPECT_EQ(access((dir + "/kept").c_str(), F_OK), 0);
    STACKIE_SKIP_UNDER_LANDLOCK("the temp dir is at its own path (TMPDIR), not at /tmp");
  }
  EXPECT_EQ(probe({"write", "/tmp/kept"}, {"--tmpdir", dir}), "ok");
  EXPECT_EQ(access((dir + "/kept").c_str(), F_OK), 0);
}

// Issue 14: a block swapped its runtime dir (in its own /tmp) for a link to the user's files. The
// lockbox opens every source below --storage-root from the root, with no link on the way: the
// setup fails naming the path and nothing of the link's target is shown. Without
// --storage-root the same policy follows the link (what the daemon used to do).
TEST_F(Lockbox, AStorageLinkIsRefusedNotFollowed) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  std::string storage = dir + "/storage";
  std::string tmp = storage + "/tmp/s-b";
  ASSERT_EQ(system(("mkdir -p " + tmp + " " + dir + "/ssh").c_str()), 0);
  std::ofstream(dir + "/ssh/id_ed25519") << "key";
  ASSERT_EQ(symlink((dir + "/ssh").c_str(), (tmp + "/run").c_str()), 0);
  RunOptions options;
  options.with_error_fd = true;
  if (landlock_backend()) {
    // The same hostile layout at its own path: a rule on the link would open its target.
    // Checked failing before the landlock ruleset opened storage paths from the root.
    RunResult refused = run_probe(
        {"--error-fd", "3", "--storage-root", storage, "--tmpdir", tmp, "--rw", tmp + "/run"},
        {"read", tmp + "/run/id_ed25519"}, options);
    EXPECT_EQ(refused.exit_code, 125) << refused.err;
    EXPECT_NE(refused.error_fd.find(tmp + "/run: is a symbolic link"), std::string::npos)
        << refused.error_fd;
    EXPECT_EQ(refused.out.find("key"), std::string::npos);
    EXPECT_EQ(trim(run_probe({"--rw", tmp + "/run"}, {"read", tmp + "/run/id_ed25519"}).out),
              "key");  // control: without the root the link is followed
    ASSERT_EQ(symlink((dir + "/ssh").c_str(), (storage + "/tmp/linked").c_str()), 0);
    RunResult via = run_probe(
        {"--error-fd", "3", "--storage-root", storage, "--tmpdir", storage + "/tmp/linked"},
        {"read", storage + "/tmp/linked/id_ed25519"}, options);
    EXPECT_EQ(via.exit_code, 125) << via.err;
    EXPECT_NE(via.error_fd.find(storage + "/tmp/linked: is a symbolic link"), std::string::npos)
        << via.error_fd;
    EXPECT_EQ(via.out.find("key"), std::string::npos);
    // A link planted inside a writable storage directory with a read-only path below it
    // (the rules then go entry by entry) gets no rule either.
    std::string volume = storage + "/volumes/v";
    ASSERT_EQ(system(("mkdir -p " + volume + "/conf").c_str()), 0);
    std::ofstream(volume + "/conf/app.conf") << "conf";
    ASSERT_EQ(symlink((dir + "/ssh").c_str(), (volume + "/keys").c_str()), 0);
    EXPECT_EQ(probe({"read", volume + "/keys/id_ed25519"},
                    {"--storage-root", storage, "--rw", volume, "--ro", volume + "/conf"}),
              "EACCES");
    return;
  }
  RunResult refused = run_probe(
      {"--error-fd", "3", "--storage-root", storage, "--tmpdir", tmp, "--rw", tmp + "/run:/run"},
      {"read", "/run/id_ed25519"}, options);
  EXPECT_EQ(refused.exit_code, 125) << refused.err;
  EXPECT_NE(refused.error_fd.find(tmp + "/run: is a symbolic link"), std::string::npos)
      << refused.error_fd;
  EXPECT_EQ(refused.out.find("key"), std::string::npos);
  // The link is the only way in: without the root the lockbox follows it.
  EXPECT_EQ(
      trim(
          run_probe({"--tmpdir", tmp, "--rw", tmp + "/run:/run"}, {"read", "/run/id_ed25519"}).out),
      "key");
  // A link on the way to the temp dir itself is refused the same way.
  ASSERT_EQ(symlink((dir + "/ssh").c_str(), (storage + "/tmp/linked").c_str()), 0);
  RunResult via =
      run_probe({"--error-fd", "3", "--storage-root", storage, "--tmpdir", storage + "/tmp/linked"},
                {"exists", "/tmp/id_ed25519"}, options);
  EXPECT_EQ(via.exit_code, 125) << via.err;
  EXPECT_NE(via.error_fd.find(storage + "/tmp/linked: is a symbolic link"), std::string::npos)
      << via.error_fd;
}

// The daemon's layout when STACKIE_HOME is under /tmp: /tmp backed by the block's scratch dir,
// a volume under /tmp at its own path. The volume's mount target is made in the scratch dir
// (the block's own); MountTargetIsNeverCreatedOnTheHost covers every other bound directory.
TEST_F(Lockbox, PolicyPathUnderTmpWithHostTmpDir) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "nothing is mounted: the temp dir and the volume are where they are "
      "(ReadWritePathPersistsOnTheHost, HostTmpDirBacksTmp)");
  testing::TempDir scratch_temp("stackie-lockbox-test", "/tmp");
  const std::string scratch = scratch_temp.path();
  testing::TempDir volume_temp("stackie-lockbox-test", "/tmp");
  const std::string volume = volume_temp.path();
  EXPECT_EQ(probe({"write", volume + "/out"}, {"--tmpdir", scratch, "--rw", volume}), "ok");
  std::ifstream file(volume + "/out");
  std::string content;
  file >> content;
  EXPECT_EQ(content, "data");
}

// POSIX shared memory must work for real servers (postgres's dynamic shared memory wants
// megabytes), on a tmpfs of the sandbox's own: nothing written there reaches the host's.
TEST_F(Lockbox, DevShmIsPrivateAndLargerThanTheMinimalDev) {
  std::string name = "stackie-shm-test-" + std::to_string(getpid());
  if (landlock_backend()) {  // the host's /dev/shm: closed, nothing written there
    EXPECT_EQ(probe({"write", "/dev/shm/" + name}), "EACCES");
    EXPECT_NE(access(("/dev/shm/" + name).c_str(), F_OK), 0);
    STACKIE_SKIP_UNDER_LANDLOCK("no /dev/shm of its own: POSIX shared memory is refused");
  }
  RunResult r =
      run({lockbox_path(), "--", "/bin/sh", "-c",
           "head -c 8388608 /dev/zero > /dev/shm/" + name + " && stat -c %s /dev/shm/" + name});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trim(r.out), "8388608");
  EXPECT_NE(access(("/dev/shm/" + name).c_str(), F_OK), 0)
      << "the sandbox wrote the host's /dev/shm";
}

TEST_F(Lockbox, PrivateSysvIpc) {
  key_t key = 0x5ac0000 + getpid() % 65536;
  int id = shmget(key, 4096, IPC_CREAT | 0600);
  ASSERT_GE(id, 0);
  EXPECT_EQ(trim(run({probe_path(), "shm", std::to_string(key)}).out), "ok") << "control";
  if (landlock_backend()) shmctl(id, IPC_RMID, nullptr);
  STACKIE_SKIP_UNDER_LANDLOCK("no IPC namespace: the user's SysV IPC objects are reachable");
  EXPECT_EQ(probe({"shm", std::to_string(key)}), "ENOENT");
  shmctl(id, IPC_RMID, nullptr);
}

TEST_F(Lockbox, EnvironmentScrubbed) {
  RunOptions options;
  options.extra_env = {"SSH_AUTH_SOCK=/tmp/agent", "DBUS_SESSION_BUS_ADDRESS=unix:x",
                       "XDG_RUNTIME_DIR=/run/user/1"};
  RunResult r = run_probe({"--setenv", "ONLY", "this"}, {"env"}, options);
  EXPECT_EQ(trim(r.out), "ONLY=this");
}

TEST_F(Lockbox, IdentityRootIsUidZero) {
  STACKIE_SKIP_UNDER_LANDLOCK("no user namespace: the block runs as the caller's uid");
  EXPECT_EQ(probe({"ids"}), "0 0");
}

TEST_F(Lockbox, IdentityUserIsTheCaller) {
  EXPECT_EQ(probe({"ids"}, {"--identity", "user"}),
            std::to_string(getuid()) + " " + std::to_string(getgid()));
}

TEST_F(Lockbox, SetgroupsDeniedAndOneLineMaps) {
  STACKIE_SKIP_UNDER_LANDLOCK("no user namespace: the caller's uid, gid and groups");
  EXPECT_EQ(probe({"read", "/proc/self/setgroups"}), "deny");
  std::string map = probe({"read", "/proc/self/uid_map"});
  EXPECT_EQ(std::count(map.begin(), map.end(), '\n'), 0) << map;
  EXPECT_NE(map.find(" 1"), std::string::npos);
}

TEST_F(Lockbox, OwnCgroupNamespace) {
  STACKIE_SKIP_UNDER_LANDLOCK("no cgroup namespace: the block sees its cgroup's host path");
  EXPECT_EQ(probe({"read", "/proc/self/cgroup"}).back(), '/');
}

TEST_F(Lockbox, SetuidBitsAreIgnoredOnBinds) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no nosuid mount: no_new_privs (NoNewPrivs) makes execve ignore "
      "setuid bits instead");
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  EXPECT_NE(probe({"statvfs", "/data"}, {"--rw", dir + ":/data"}).find("nosuid"),
            std::string::npos);
}

TEST_F(Lockbox, WorkingDirectoryResolvedInside) {
  EXPECT_EQ(probe({"cwd"}, {"--chdir", "/usr/lib"}), "/usr/lib");
}

}  // namespace
}  // namespace stackie::testing
