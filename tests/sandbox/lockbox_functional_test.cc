// Functional behaviour of stackie-lockbox: exit codes, signals, stdio, death, --join, the policy
// fd, and every bad-input path of the command line.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "lockbox_harness.h"
#include "policy/policy.h"
#include "support/proc_file.h"

extern char** environ;

namespace stackie::testing {
namespace {

class LockboxRun : public ::testing::Test {
 protected:
  void SetUp() override { STACKIE_REQUIRE_UNPRIVILEGED(); }
};

TEST_F(LockboxRun, ShellWorksWithNoFlags) {
  RunResult r = run({lockbox_path(), "--", "/bin/sh", "-c", "echo hi"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hi\n");
}

TEST_F(LockboxRun, CommandFoundOnDefaultPath) {
  RunResult r = run({lockbox_path(), "--", "sh", "-c", "exit 0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LockboxRun, ExitCodePassesThrough) {
  EXPECT_EQ(run_probe({}, {"exit", "3"}).exit_code, 3);
  EXPECT_EQ(run_probe({}, {"exit", "0"}).exit_code, 0);
}

TEST_F(LockboxRun, SignalDeathIs128PlusN) {
  EXPECT_EQ(run_probe({}, {"raise", "9"}).exit_code, 137);
}

TEST_F(LockboxRun, NotFoundIs127WithReport) {
  RunOptions options;
  options.with_error_fd = true;
  RunResult r = run({lockbox_path(), "--error-fd", "3", "--", "/no/such/program"}, options);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.error_fd.find("\"step\":\"exec\""), std::string::npos) << r.error_fd;
  EXPECT_NE(r.error_fd.find("\"errno\":2"), std::string::npos) << r.error_fd;
}

TEST_F(LockboxRun, NotExecutableIs126) {
  RunResult r = run({lockbox_path(), "--", "/etc/passwd"});
  EXPECT_EQ(r.exit_code, 126) << r.err;
}

TEST_F(LockboxRun, ThreadsWork) {
  EXPECT_EQ(trim(run_probe({}, {"threads"}).out), "28");
}

TEST_F(LockboxRun, StdinIsPiped) {
  RunOptions options;
  options.stdin_data = "piped text\n";
  RunResult r = run({lockbox_path(), "--", "/bin/cat"}, options);
  EXPECT_EQ(r.out, "piped text\n");
}

TEST_F(LockboxRun, SigtermReachesTheBlock) {
  Background box({"sleep", "30"});
  ASSERT_TRUE(box.wait_for("ready"));
  kill(box.pid(), SIGTERM);
  EXPECT_EQ(box.wait_exit(), 143);
}

class Forwarding : public LockboxRun, public ::testing::WithParamInterface<int> {};

TEST_P(Forwarding, SignalIsForwarded) {
  Background box({"wait-signal"});
  ASSERT_TRUE(box.wait_for("ready"));
  kill(box.pid(), GetParam());
  EXPECT_TRUE(box.wait_for(sigabbrev_np(GetParam()))) << box.output();
  EXPECT_EQ(box.wait_exit(), 0);
}

INSTANTIATE_TEST_SUITE_P(Signals, Forwarding,
                         ::testing::Values(SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2),
                         [](const auto& param_info) {
                           return std::string(sigabbrev_np(param_info.param));
                         });

TEST_F(LockboxRun, KillOfTheLauncherKillsDaemonisedGrandchild) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no pid namespace: a SIGKILL of the lockbox leaves the command's orphans running where no "
      "cgroup is delegated; SIGPWR (what the daemon sends) and the parent's death kill the whole "
      "tree (lockbox_landlock_test WholeTreeDiesWithTheSandbox, DeathOfTheParentKillsTheSandbox)");
  Background box({"daemonize"});
  ASSERT_TRUE(box.wait_for("ready"));
  kill(box.pid(), SIGKILL);
  box.wait_exit();
  // The grandchild holds our pipe; EOF means it is dead.
  EXPECT_TRUE(box.eof_within(3000)) << "a setsid grandchild survived the lockbox";
}

TEST_F(LockboxRun, DeathOfTheParentKillsTheSandbox) {
  // A stand-in daemon: a shell that starts the lockbox in the background, then is SIGKILLed.
  int out[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  std::string backend = current_backend().empty() ? "auto" : current_backend();
  std::string bind = landlock_backend() ? probe_path() : probe_path() + ":/probe";
  std::string script = "'" + lockbox_path() + "' --backend " + backend + " --ro '" + bind +
                       "' -- '" + probe_inside() + "' daemonize & wait";
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  pid_t shell;
  ASSERT_EQ(posix_spawn(&shell, argv[0], &actions, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  char buffer[64];
  pollfd p{out[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  ASSERT_GT(read(out[0], buffer, sizeof buffer), 0);  // "ready"
  kill(shell, SIGKILL);
  waitpid(shell, nullptr, 0);
  bool eof = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!eof && std::chrono::steady_clock::now() < deadline) {
    if (poll(&p, 1, 100) == 1) eof = read(out[0], buffer, sizeof buffer) <= 0;
  }
  close(out[0]);
  EXPECT_TRUE(eof) << "the sandbox outlived its parent";
}

TEST_F(LockboxRun, JoinSeesTheSameFilesAndPidNamespace) {
  testing::TempDir dir_temp("stackie-lockbox-test", "/tmp");
  const std::string dir = dir_temp.path();
  if (landlock_backend()) {  // no mount namespace: the same rules (a --rw dir, nothing else)
    std::string secret = dir_temp.write("secret", "s3cret");
    std::string shared = dir + "/shared";
    ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
    Background box({"sleep", "30"}, {"--rw", shared});
    ASSERT_TRUE(box.wait_for("ready"));
    RunResult w = run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/sh", "-c",
                       "echo joined > " + shared + "/f; cat " + secret + " || echo refused"});
    EXPECT_EQ(w.exit_code, 0) << w.err;
    EXPECT_EQ(w.out, "refused\n");
    EXPECT_NE(w.err.find("Permission denied"), std::string::npos) << w.err;
    RunResult r =
        run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/cat", shared + "/f"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "joined\n");
    STACKIE_SKIP_UNDER_LANDLOCK(
        "no pid namespace to join: the joined command sees the host's "
        "pids; no --tmpfs (refused)");
  }
  Background box({"sleep", "30"}, {"--tmpfs", "/scratch"});
  ASSERT_TRUE(box.wait_for("ready"));
  // Write through one join, read through another: same mount namespace.
  RunResult w = run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/sh", "-c",
                     "echo joined > /scratch/f"});
  EXPECT_EQ(w.exit_code, 0) << w.err;
  RunResult r = run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/sh", "-c",
                     "cat /scratch/f; ls /proc | grep -c '^[0-9]'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 7), "joined\n");
  EXPECT_LE(std::stoi(r.out.substr(7)), 5) << "only the sandbox's processes: " << r.out;
  EXPECT_NE(access("/scratch/f", F_OK), 0);
}

TEST_F(LockboxRun, JoinIsLockedDownAndReturnsTheStatus) {
  Background box({"sleep", "30"});
  ASSERT_TRUE(box.wait_for("ready"));
  RunResult r = run({lockbox_path(), "--join", std::to_string(box.pid()), "--", "/bin/sh", "-c",
                     "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; exit 7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.out.find("CapEff:\t0000000000000000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NoNewPrivs:\t1"), std::string::npos);
  EXPECT_NE(r.out.find("Seccomp:\t2"), std::string::npos);
}

TEST_F(LockboxRun, JoinOfANonSandboxFails) {
  RunResult r = run({lockbox_path(), "--join", std::to_string(getpid()), "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("neither a stackie sandbox"), std::string::npos) << r.err;
}

TEST_F(LockboxRun, PolicyFdRoundTrip) {
  SandboxPolicy policy;
  policy.name = "fd-policy";
  policy.environment = {{"FROM", "fd"}};
  policy.read_only = {{probe_path(), landlock_backend() ? probe_path() : "/probe"}};
  std::string json = policy_to_json(policy);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], json.data(), json.size()), static_cast<ssize_t>(json.size()));
  close(p[1]);
  RunOptions options;
  options.leak_fd = p[0];
  RunResult r = run(
      {lockbox_path(), "--policy-fd", std::to_string(p[0]), "--", probe_inside(), "env"}, options);
  close(p[0]);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trim(r.out), "FROM=fd");
  RunResult printed =
      run({lockbox_path(), "--name", "fd-policy", "--no-system-view", "--print-policy"});
  auto back = policy_from_json(trim(printed.out));
  ASSERT_TRUE(back.ok()) << printed.out;
  EXPECT_EQ(back->name, "fd-policy");
  EXPECT_FALSE(back->system_view);
}

// The names of consumed blocks resolve inside (compose's `db:5432`, issue 22): the sandbox gets
// an /etc/hosts of its own instead of the host's, and it is read-only like the rest of /etc.
TEST_F(LockboxRun, HostNamesAreTheSandboxsOwnEtcHosts) {
  STACKIE_SKIP_UNDER_LANDLOCK(
      "no /etc/hosts of its own: the host's, so a consumed block's name "
      "does not resolve (its port is at 127.0.0.1)");
  SandboxPolicy policy;
  policy.name = "hosts-policy";
  policy.host_names = {"db", "cache"};
  std::string json = policy_to_json(policy);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], json.data(), json.size()), static_cast<ssize_t>(json.size()));
  close(p[1]);
  RunOptions options;
  options.leak_fd = p[0];
  RunResult r = run({lockbox_path(), "--policy-fd", std::to_string(p[0]), "--", "/bin/sh", "-c",
                     "cat /etc/hosts; getent hosts db; echo x >> /etc/hosts || echo read-only"},
                    options);
  close(p[0]);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "127.0.0.1\tdb\n127.0.0.1\tcache\n127.0.0.1       db\nread-only\n");
}

TEST_F(LockboxRun, SetupFailureIsOneJsonLineAnd125) {
  RunOptions options;
  options.with_error_fd = true;
  RunResult r = run(
      {lockbox_path(), "--error-fd", "3", "--chdir", "/no/such/dir", "--", "/bin/true"}, options);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(std::count(r.error_fd.begin(), r.error_fd.end(), '\n'), 1) << r.error_fd;
  EXPECT_EQ(r.error_fd.rfind("{\"step\":\"chdir\",\"errno\":2,\"message\":", 0), 0u) << r.error_fd;
}

struct BadInput {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

class LockboxBadInput : public LockboxRun, public ::testing::WithParamInterface<BadInput> {};

TEST_P(LockboxBadInput, Exits125NamingTheProblem) {
  std::vector<std::string> argv = {lockbox_path()};
  argv.insert(argv.end(), GetParam().args.begin(), GetParam().args.end());
  RunResult r = run(argv);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Cli, LockboxBadInput,
    ::testing::Values(
        BadInput{"NoArguments", {}, "missing '--'"},
        BadInput{"UnknownOption", {"--frobnicate", "--", "/bin/true"}, "unknown option"},
        BadInput{"MissingCommand", {"--"}, "missing COMMAND"},
        BadInput{"NoSeparator", {"/bin/true"}, "unknown option"},
        BadInput{"RelativeRo", {"--ro", "usr", "--", "/bin/true"}, "must be absolute"},
        BadInput{"RelativeDest", {"--rw", "/tmp:data", "--", "/bin/true"}, "must be absolute"},
        BadInput{"EmptyDest", {"--ro", "/tmp:", "--", "/bin/true"}, "empty DEST"},
        BadInput{"RoMissingValue", {"--ro"}, "--ro needs a value"},
        BadInput{"BadNet", {"--net", "wan", "--", "/bin/true"}, "unknown network mode"},
        BadInput{"BadIdentity", {"--identity", "admin", "--", "/bin/true"}, "unknown identity"},
        BadInput{"SetenvWithoutValue", {"--setenv", "A"}, "needs a VALUE"},
        BadInput{
            "BadSetenvName", {"--setenv", "A=B", "x", "--", "/bin/true"}, "invalid environment"},
        BadInput{"RelativeChdir", {"--chdir", "tmp", "--", "/bin/true"}, "working directory"},
        BadInput{"DotDotPath", {"--ro", "/usr/../etc", "--", "/bin/true"}, "without '.', '..'"},
        BadInput{"DuplicateDest",
                 {"--tmpfs", "/x", "--tmpfs", "/x", "--", "/bin/true"},
                 "share the destination"},
        BadInput{"PolicyFdNotNumber", {"--policy-fd", "x", "--", "/bin/true"}, "is not a number"},
        BadInput{"PolicyFdNotOpen", {"--policy-fd", "77", "--", "/bin/true"}, "read the policy"},
        BadInput{"PolicyFdWithFlags",
                 {"--policy-fd", "0", "--ro", "/usr", "--", "/bin/true"},
                 "cannot be combined"},
        BadInput{"ErrorFdNotOpen", {"--error-fd", "78", "--", "/bin/true"}, "is not open"},
        BadInput{"PassFdBelow3", {"--pass-fd", "2", "--", "/bin/true"}, "is not a number >= 3"},
        BadInput{"PassFdNotOpen", {"--pass-fd", "79", "--", "/bin/true"}, "not usable"},
        BadInput{"JoinNotNumber", {"--join", "abc", "--", "/bin/true"}, "is not a number"},
        BadInput{"JoinNoSuchPid", {"--join", "999999999", "--", "/bin/true"}, "no process"},
        BadInput{
            "JoinWithBinds", {"--join", "1", "--ro", "/usr", "--", "/bin/true"}, "only --setenv"},
        BadInput{"BadName", {"--name", "Bad Name", "--", "/bin/true"}, "may only contain"},
        BadInput{"MissingRoSource",
                 {"--ro", "/no/such/source", "--", "/bin/true"},
                 "bind /no/such/source"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(LockboxRun, InvalidPolicyJsonIs125) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], "{not json", 9), 9);
  close(p[1]);
  RunOptions options;
  options.leak_fd = p[0];
  RunResult r =
      run({lockbox_path(), "--policy-fd", std::to_string(p[0]), "--", "/bin/true"}, options);
  close(p[0]);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
}

TEST_F(LockboxRun, HelpAndVersionExitZero) {
  EXPECT_EQ(run({lockbox_path(), "--help"}).exit_code, 0);
  RunResult v = run({lockbox_path(), "--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("stackie-lockbox"), std::string::npos);
}

// The user-namespaces-unavailable path, end to end, without touching the host: in a user
// namespace of our own, user.max_user_namespaces is ours to set to 0.
TEST_F(LockboxRun, NoUserNamespacesFailsClosedWithCauseAndFix) {
  testing::TempDir marker_dir("stackie-lockbox-test", "/tmp");
  std::string marker = marker_dir / "ran";
  // --backend namespaces: on auto the lockbox now falls back to landlock there (which
  // lockbox_landlock_test's LandlockFallback checks), and this test skipped without a word.
  std::string script = "echo 0 > /proc/sys/user/max_user_namespaces && exec '" + lockbox_path() +
                       "' --backend namespaces --rw /tmp -- /bin/sh -c 'touch " + marker + "'";
  RunResult r = run({"/usr/bin/unshare", "--user", "--map-root-user", "/bin/sh", "-c", script});
  if (r.err.find("max_user_namespaces") == std::string::npos && r.exit_code != 125)
    GTEST_SKIP() << "cannot lower max_user_namespaces in a nested user namespace here: " << r.err;
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("user.max_user_namespaces is 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fix:"), std::string::npos) << r.err;
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the command ran unsandboxed";
}

// ---- Resource limits (stackie-lockbox(1) LIMITS; issue 14 item 7) ------------------------------

using testing_proc::processes_in_user_ns_of;

// A hostile block tries to run 300 processes under --pids 32 (a bounded "bomb": without the
// limit it must not take the test host down). Checked failing without apply_rlimits.
TEST_F(LockboxRun, ForkBombIsHeldAtThePidsLimitAndTheUserStillForks) {
  Background bomb({"fork-bomb", "300"}, {"--pids", "32"});
  ASSERT_TRUE(bomb.wait_for("\n", 20000)) << bomb.output();
  // The monitor, pid 1 and the probe count: at most 29 children.
  EXPECT_EQ(bomb.output().rfind("forked ", 0), 0u) << bomb.output();
  EXPECT_NE(bomb.output().find(" EAGAIN"), std::string::npos)
      << "every fork of the bomb succeeded: " << bomb.output();
  // Landlock (no user namespace): RLIMIT_NPROC counts every task of the user, so the bomb is
  // held at the user's task count at start plus --pids, a room the user's other programs
  // share: nothing bounds it at 32 exactly (stackie-lockbox(1) BACKENDS).
  if (!landlock_backend()) {
    int inside = processes_in_user_ns_of(bomb.pid());
    EXPECT_GT(inside, 16) << "the bomb did not even get going";
    EXPECT_LE(inside, 32) << "processes in the sandbox's user namespace";
  }
  // The user (this test, same uid) is not held by the sandbox's count.
  pid_t child = fork();
  if (child == 0) _exit(7);
  ASSERT_GT(child, 0) << "the test process could not fork: " << std::strerror(errno);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 7);
  // And a second sandbox of the same user starts and runs its own processes.
  EXPECT_EQ(trim(run_probe({"--pids", "32"}, {"threads"}).out), "28");
}

// Memory tests run python3 (from the system view), not the probe: under --memory the
// fallback is RLIMIT_DATA, under which no sanitizer-built program starts (ASan's shadow is ~15
// TiB of private writable mappings), and the probe is one in `scripts/test --sanitize`.
const char kHog[] =
    "import sys\n"
    "try:\n"
    "    block = b'x' * (int(sys.argv[1]) << 20)\n"
    "    print('ok')\n"
    "except MemoryError:\n"
    "    print('ENOMEM')\n";

std::vector<std::string> hog(const std::vector<std::string>& flags, int mib) {
  std::vector<std::string> argv = {lockbox_path()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "/usr/bin/python3", "-c", kHog, std::to_string(mib)});
  return argv;
}

// The sanitize run (scripts/test --sanitize) builds the lockbox with ASan too: its runtime
// reserves terabytes of address space, which any RLIMIT_DATA (--memory) refuses.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kLockboxUnderAsan = true;
#else
constexpr bool kLockboxUnderAsan = false;
#endif

// statfs of PATH inside, through stat(1): total bytes.
uint64_t fs_bytes(const std::vector<std::string>& flags, const std::string& path) {
  std::vector<std::string> argv = {lockbox_path()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "/usr/bin/stat", "-f", "-c", "%b %S", path});
  RunResult run_result = run(argv);
  unsigned long long blocks = 0, size = 0;
  if (std::sscanf(run_result.out.c_str(), "%llu %llu", &blocks, &size) != 2) return 0;
  return blocks * size;
}

// A memory bomb: private memory beyond --memory fails to allocate (RLIMIT_DATA), while an
// allocation within it works. Checked failing without apply_rlimits.
TEST_F(LockboxRun, MemoryBombFailsToAllocateBeyondTheMemoryLimit) {
  if (kLockboxUnderAsan)
    GTEST_SKIP() << "an ASan-built stackie-lockbox cannot run under RLIMIT_DATA (its shadow "
                    "memory needs more); the normal build runs this test";
  EXPECT_EQ(trim(run(hog({"--memory", "64MiB"}, 512)).out), "ENOMEM");
  EXPECT_EQ(trim(run(hog({"--memory", "64MiB"}, 16)).out), "ok");
  // The default limits (no --memory, as a stack without `memory:`) set no RLIMIT_DATA. Filling
  // 512MiB took over the default 10s on a loaded 2-core CI machine: a longer kill timeout.
  RunOptions patient;
  patient.timeout_ms = 60000;
  EXPECT_EQ(trim(run(hog({"--pids", "64"}, 512), patient).out), "ok");
}

// /dev/shm is a tmpfs of the sandbox's own, sized: min(memory, 64MiB) by default, --shm when
// given; not half of the host's RAM (before: statfs said ~12GiB here). Writing past it is
// ENOSPC. A fresh /tmp is bounded by --memory.
TEST_F(LockboxRun, DevShmAndAFreshTmpAreSizedByTheLimits) {
  if (kLockboxUnderAsan)
    GTEST_SKIP() << "an ASan-built stackie-lockbox cannot run under RLIMIT_DATA (its shadow "
                    "memory needs more); the normal build runs this test";
  if (landlock_backend()) {
    EXPECT_EQ(trim(run_probe({"--shm", "8MiB"}, {"fill", "/dev/shm/big", "16"}).out), "EACCES");
    STACKIE_SKIP_UNDER_LANDLOCK(
        "no /dev/shm or /tmp of its own to size: the host's /dev/shm is "
        "closed; the temp dir (TMPDIR) is bounded by its file system");
  }
  EXPECT_EQ(trim(run_probe({}, {"fs-size", "/dev/shm"}).out), std::to_string(64 << 20));
  EXPECT_EQ(fs_bytes({"--memory", "32MiB"}, "/dev/shm"), 32u << 20);
  EXPECT_EQ(trim(run_probe({"--shm", "8MiB"}, {"fs-size", "/dev/shm"}).out),
            std::to_string(8 << 20));
  EXPECT_EQ(trim(run_probe({"--shm", "8MiB"}, {"fill", "/dev/shm/big", "16"}).out), "ENOSPC");
  EXPECT_EQ(fs_bytes({"--memory", "48MiB"}, "/tmp"), 48u << 20);
}

// What --join runs (stackie exec, exec health checks: maybe the block's own code) is held by
// the sandbox's limits as the block is. Checked failing without adopt_limits_of: the joined
// bomb forked 100 and the 512MiB allocation worked.
TEST_F(LockboxRun, JoinedCommandsAreHeldByTheSandboxsLimits) {
  if (kLockboxUnderAsan)
    GTEST_SKIP() << "an ASan-built stackie-lockbox cannot run under RLIMIT_DATA (its shadow "
                    "memory needs more); the normal build runs this test";
  Background box({"-c", "echo ready; exec sleep 30"}, {"--pids", "16", "--memory", "64MiB"},
                 "/bin/sh");
  ASSERT_TRUE(box.wait_for("ready"));
  std::string pid = std::to_string(box.pid());
  // The memory limit first: under landlock the bomb's sleepers below fill a pids room the
  // user's other programs share, so a later join may find no fork left at all.
  RunResult big = run({lockbox_path(), "--join", pid, "--", "/usr/bin/python3", "-c", kHog, "512"});
  EXPECT_EQ(trim(big.out), "ENOMEM") << big.err;
  // dash stops at the first fork it cannot make ("Cannot fork"); its sleepers stay.
  RunResult bomb =
      run({lockbox_path(), "--join", pid, "--", "/bin/sh", "-c",
           "i=0; while [ $i -lt 100 ]; do sleep 30 >/dev/null 2>&1 & i=$((i+1)); done; echo all"});
  EXPECT_EQ(bomb.out.find("all"), std::string::npos) << "every fork of the joined bomb worked";
  EXPECT_NE(bomb.err.find("fork"), std::string::npos) << bomb.err;
  if (!landlock_backend()) {  // landlock: the user's tasks, not the sandbox's (ForkBomb...)
    int inside = processes_in_user_ns_of(box.pid());
    EXPECT_GT(inside, 8);
    EXPECT_LE(inside, 16);
  }
}

TEST_F(LockboxRun, LimitFlagsRefuseBadValues) {
  RunResult run = run_probe({"--memory", "lots"}, {"exit", "0"});
  EXPECT_EQ(run.exit_code, 125);
  EXPECT_NE(run.err.find("--memory: 'lots' is not a size"), std::string::npos) << run.err;
  run = run_probe({"--pids", "2"}, {"exit", "0"});
  EXPECT_EQ(run.exit_code, 125);
  EXPECT_NE(run.err.find("--pids"), std::string::npos) << run.err;
  run = run_probe({"--memory", "1MiB"}, {"exit", "0"});
  EXPECT_EQ(run.exit_code, 125);
  EXPECT_NE(run.err.find("below the minimum 16MiB"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace stackie::testing
