// The lockbox spawner with the real stackie-lockbox: setup failures reach the user verbatim,
// stop reaches everything in the sandbox (daemonised grandchildren included), exec health
// checks run inside through --join, and kill -9 of the daemon leaves no block process alive.
// Built only once the real launcher is in the tree (see meson.build); run as an unprivileged
// user (suite 'sandbox').
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>

#include "loop_fixture.h"
#include "sandbox/zygote_protocol.h"
#include "spawn/spawner.h"
#include "spawn/zygote_client.h"
#include "supervisor/supervisor.h"

namespace stackie {
namespace {

using testing_support::LoopTest;
using testing_support::read_lines;

// Pids of every process whose command line mentions `token`.
std::vector<int> processes_mentioning(const std::string& token) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = ::readdir(proc)) {
    int pid = std::atoi(entry->d_name);
    if (pid <= 0 || pid == ::getpid()) continue;
    std::string cmdline =
        testing_support::read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.find(token) != std::string::npos && testing_support::process_alive(pid))
      pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

class LockboxTest : public LoopTest {
 protected:
  void SetUp() override {
    LoopTest::SetUp();
    if (HasFatalFailure()) return;
    auto lockbox = find_lockbox();
    ASSERT_TRUE(lockbox.ok()) << lockbox.error().message << " (meson sets STACKIE_LOCKBOX)";
    lockbox_path_ = *lockbox;
    lockbox_ = make_lockbox_spawner(lockbox_path_);
    passthrough_ = make_passthrough_spawner();
    SupervisorConfig config;
    config.loop = &loop_;
    config.sandboxed = lockbox_.get();
    config.passthrough = passthrough_.get();
    supervisor_ = std::make_unique<Supervisor>(config);
  }
  void TearDown() override {
    supervisor_.reset();
    lockbox_.reset();
    passthrough_.reset();
    close_loop();
  }
  ResolvedBlock boxed(const std::string& name, std::vector<std::string> actions) {
    ResolvedBlock b = block(name, std::move(actions));
    b.sandboxed = true;
    std::string helper_dir = helper_.substr(0, helper_.rfind('/'));
    b.policy.read_only = {{helper_dir, ""}};
    b.policy.read_write = {{dir_, ""}};
    b.policy.network = NetworkMode::none;
    return b;
  }
  Status up(ResolvedStack s) {
    std::optional<Status> result;
    supervisor_->up(std::move(s), {}, nullptr, [&](Status st) { result = st; });
    EXPECT_TRUE(run_until([&] { return result.has_value(); }, 15000));
    return result.value_or(Error{-1, "timeout"});
  }
  Status down(const std::string& name) {
    std::optional<Status> result;
    supervisor_->down(name, [&](Status st) { result = st; });
    EXPECT_TRUE(run_until([&] { return result.has_value(); }, 15000));
    return result.value_or(Error{-1, "timeout"});
  }
  BlockStatus row(const std::string& block) {
    for (auto& r : supervisor_->ps())
      if (r.block == block) return r;
    return {};
  }

  // Whether a line of a block followed into notes_ holds `part`.
  bool noted(const std::string& part) const {
    return std::any_of(notes_.lines.begin(), notes_.lines.end(), [&](const std::string& text) {
      return text.find(part) != std::string::npos;
    });
  }

  std::string lockbox_path_;
  std::unique_ptr<Spawner> lockbox_, passthrough_;
  std::unique_ptr<Supervisor> supervisor_;
  // The lines of a block a test follows: a member, so that it outlives the supervisor, which
  // TearDown destroys first, however the test ends.
  struct : LogSink {
    std::vector<std::string> lines;
    bool offer(const LogLine& line) override {
      lines.push_back(line.text);
      return true;
    }
  } notes_;
};

TEST_F(LockboxTest, ABlockRunsInsideAndReportsItsSandboxKind) {
  auto b = boxed("echo", {"print", "inside", "stamp", dir_ + "/ran", "wait"});
  ASSERT_TRUE(up(stack("s", {b})).ok());
  EXPECT_EQ(to_string(row("echo").sandbox), "linux-namespaces");
  ASSERT_TRUE(run_until([&] { return read_lines(dir_ + "/ran").size() == 1; }));
  // Inside its own pid namespace the block is pid 1's child: a small pid, not ours.
  auto stamp = read_lines(dir_ + "/ran")[0];
  EXPECT_LT(std::stoi(stamp), 10) << stamp;
  ASSERT_TRUE(down("s").ok());
}

TEST_F(LockboxTest, ASetupFailureIsTheBlocksReasonVerbatim) {
  auto b = boxed("broken", {"wait"});
  b.policy.read_only.push_back({dir_ + "/does-not-exist", ""});
  auto result = up(stack("s", {b}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(row("broken").state, BlockState::failed);
  std::string reason = row("broken").reason;
  EXPECT_NE(reason.find("(sandbox step: "), std::string::npos) << reason;
  EXPECT_NE(reason.find("does-not-exist"), std::string::npos) << reason;
  ASSERT_TRUE(down("s").ok());
}

TEST_F(LockboxTest, DownLeavesNoProcessOfTheBlockNotEvenDaemonisedOnes) {
  std::string pidfile = dir_ + "/grandchild";
  auto b = boxed("forker", {"daemonize", pidfile, "ignore", "TERM", "wait"});
  b.stop_timeout = Milliseconds{300};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(run_until([&] { return processes_mentioning(pidfile).size() >= 2; }))
      << "the block and its daemonised grandchild";
  ASSERT_TRUE(down("s").ok());
  EXPECT_TRUE(run_until([&] { return processes_mentioning(pidfile).empty(); }, 3000));
}

TEST_F(LockboxTest, DownEndsOnlyOnceTheLastProcessOfTheBlockIsGone) {
  // `down` ends, and a restart starts the next block, once the block's exit is reported: by
  // then every process of it must be gone, or the next one could meet it on its port or its
  // files. 21 processes with 64 MiB mapped take a while to die; TERM ignored, so the stop ends
  // in the kill.
  std::string token = dir_ + "/heavy";
  auto b =
      boxed("heavy", {"stamp", token, "ignore", "TERM", "alloc", "64", "fork-bomb", "20", "wait"});
  b.stop_timeout = Milliseconds{200};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(run_until([&] { return processes_mentioning(token).size() >= 21; }, 10000));
  // By pid: a process on its way out has no command line any more, but it still runs.
  const std::vector<int> block_pids = processes_mentioning(token);
  ASSERT_TRUE(supervisor_->follow("s", "heavy", &notes_).ok());
  ASSERT_TRUE(down("s").ok());
  const auto left = std::count_if(block_pids.begin(), block_pids.end(),
                                  [](int pid) { return testing_support::process_alive(pid); });
  EXPECT_EQ(left, 0) << "processes of the block outlived its reported exit";
  EXPECT_TRUE(noted("did not stop within"));
  EXPECT_FALSE(noted("had not ended")) << "the backstop said, for a sandbox that did end";
}

TEST_F(LockboxTest, DownEndsWhenAProcessOfTheSandboxCannotBeReaped) {
  // A command run in the block (`stackie exec`) is the child of its joiner, outside the pid
  // namespace: with the joiner stopped (^Z on `stackie exec`), the namespace cannot be emptied
  // and the monitor, which waits for that, would never exit. The daemon's backstop SIGKILLs it
  // 10 s after the kill, and down ends.
  std::string token = dir_ + "/joined";
  auto b = boxed("svc", {"ignore", "TERM", "wait"});
  b.stop_timeout = Milliseconds{200};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  auto argv = supervisor_->join_argv("s", "svc", {helper_, "stamp", token, "wait"});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  std::vector<char*> args;
  for (auto& arg : *argv) args.push_back(arg.data());
  args.push_back(nullptr);
  // Its stdio /dev/null: the lockbox refuses to carry a caller's terminal into the sandbox.
  posix_spawn_file_actions_t stdio;
  posix_spawn_file_actions_init(&stdio);
  for (int fd = 0; fd <= 2; ++fd)
    posix_spawn_file_actions_addopen(&stdio, fd, "/dev/null", O_RDWR, 0);
  pid_t joiner = 0;
  ASSERT_EQ(::posix_spawn(&joiner, args[0], &stdio, nullptr, args.data(), environ), 0);
  posix_spawn_file_actions_destroy(&stdio);
  const bool joined = run_until([&] { return processes_mentioning(token).size() >= 2; }, 10000);
  ::kill(joiner, SIGSTOP);
  ASSERT_TRUE(supervisor_->follow("s", "svc", &notes_).ok());
  std::optional<Status> result;
  const auto asked = std::chrono::steady_clock::now();
  if (joined) supervisor_->down("s", [&](Status st) { result = st; });
  const bool ended = joined && run_until([&] { return result.has_value(); }, 20000);
  const auto took = std::chrono::steady_clock::now() - asked;
  ::kill(joiner, SIGCONT);
  ::kill(joiner, SIGKILL);
  ::waitpid(joiner, nullptr, 0);
  ASSERT_TRUE(joined) << "the joiner and its command inside did not start";
  ASSERT_TRUE(ended) << "down did not end while a process of the sandbox could not be reaped";
  EXPECT_TRUE(result->ok()) << result->error().message;
  // It ended by the backstop, not because the namespace emptied after all, and says so.
  EXPECT_GE(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), 9000);
  EXPECT_TRUE(noted("had not ended 10 s after the kill"))
      << "the block's log does not say that its sandbox may have outlived it";
}

TEST_F(LockboxTest, ExecHealthCheckRunsInsideTheSandbox) {
  // The flag exists only inside the block's private /tmp: a check run outside would fail.
  auto b = boxed("svc", {"stamp", "/tmp/inside-only", "wait"});
  b.health.kind = HealthCheck::Kind::exec;
  b.health.argv = {helper_, "check-file", "/tmp/inside-only"};
  b.health.interval = Milliseconds{100};
  b.health.retries = 20;
  ASSERT_EQ(::access("/tmp/inside-only", F_OK), -1) << "test precondition: not on the host";
  auto result = up(stack("s", {b}));
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(row("svc").state, BlockState::running);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(LockboxTest, KillDashNineOfTheDaemonLeavesNothing) {
  std::string token = dir_ + "/victim";
  pid_t daemon = ::fork();
  ASSERT_GE(daemon, 0);
  if (daemon == 0) {
    // The "daemon": a fresh loop with the supervisor, forever.
    uv_loop_t loop;
    uv_loop_init(&loop);
    SupervisorConfig config;
    config.loop = &loop;
    config.sandboxed = lockbox_.get();
    Supervisor supervisor(config);
    auto a = boxed("a", {"daemonize", token, "wait"});
    auto b = boxed("b", {"stamp", token, "wait"});
    supervisor.up(stack("k", {a, b}), {}, nullptr, [](Status) {});
    uv_run(&loop, UV_RUN_DEFAULT);
    std::_Exit(0);
  }
  bool started = run_until([&] { return processes_mentioning(token).size() >= 3; }, 10000);
  ::kill(daemon, SIGKILL);
  ::waitpid(daemon, nullptr, 0);
  ASSERT_TRUE(started) << "blocks did not start";
  EXPECT_TRUE(run_until([&] { return processes_mentioning(token).empty(); }, 3000))
      << processes_mentioning(token).size() << " block processes outlived the daemon";
}

// The clone point (spawn/zygote_client.h): the monitor is a fork of the lockbox's zygote, not
// an exec of ours; it is the same lockbox code either way (the tests above run through it).
std::string status_field(int pid, const std::string& field) {
  for (const std::string& line : read_lines("/proc/" + std::to_string(pid) + "/status"))
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  return "";
}

TEST_F(LockboxTest, ZygoteForksTheMonitor) {
  auto b = boxed("forked", {"wait"});
  ASSERT_TRUE(up(stack("s", {b})).ok());
  const int monitor = row("forked").pid;
  ASSERT_GT(monitor, 0);
  const int parent = std::stoi(status_field(monitor, "PPid"));
  EXPECT_NE(parent, ::getpid()) << "the monitor was exec'd by the daemon";
  std::string cmdline =
      testing_support::read_proc_file("/proc/" + std::to_string(parent) + "/cmdline");
  for (char& c : cmdline)
    if (c == '\0') c = ' ';
  EXPECT_NE(cmdline.find("--zygote"), std::string::npos) << cmdline;
  ASSERT_TRUE(down("s").ok());
}

// Nothing of the daemon's but the daemon runs while no block does: the zygote exits with its
// last monitor, and the next spawn starts a new one.
TEST_F(LockboxTest, ZygoteRetiresWithItsLastBlockAndComesBack) {
  auto our_zygotes = [] {
    std::vector<int> ours;
    for (int pid : processes_mentioning("--zygote"))
      if (status_field(pid, "PPid").find(std::to_string(::getpid())) != std::string::npos)
        ours.push_back(pid);
    return ours;
  };
  auto b = boxed("once", {"wait"});
  ASSERT_TRUE(up(stack("s", {b})).ok());
  const int monitor = row("once").pid;
  const int zygote = std::stoi(status_field(monitor, "PPid"));
  EXPECT_EQ(our_zygotes(), std::vector<int>{zygote});
  // The zygote's children: the monitor, and the spare it forks for the next request (once it
  // has been idle a moment, linux_zygote.cc kSpareDelayMs: hence the wait).
  std::vector<int> forked;
  run_until([&] {
    forked.clear();
    for (int pid : processes_mentioning("--zygote")) {
      const std::string parent = status_field(pid, "PPid");  // "" once the process is gone
      if (pid != zygote && !parent.empty() && std::stoi(parent) == zygote) forked.push_back(pid);
    }
    return forked.size() == 2;
  });
  EXPECT_TRUE(std::find(forked.begin(), forked.end(), monitor) != forked.end());
  EXPECT_EQ(forked.size(), 2u) << "the monitor and one spare";
  ASSERT_TRUE(down("s").ok());
  EXPECT_TRUE(run_until([&] { return our_zygotes().empty(); }, 5000))
      << our_zygotes().size() << " zygote(s) still running with no block";
  EXPECT_TRUE(run_until(
      [&] { return std::none_of(forked.begin(), forked.end(), testing_support::process_alive); },
      5000))
      << "a process the zygote forked outlived it";
  auto again = boxed("again", {"stamp", dir_ + "/again", "wait"});
  ASSERT_TRUE(up(stack("t", {again})).ok());
  EXPECT_TRUE(run_until([&] { return read_lines(dir_ + "/again").size() == 1; }));
  const int second = std::stoi(status_field(row("again").pid, "PPid"));
  EXPECT_NE(second, zygote);
  EXPECT_EQ(our_zygotes(), std::vector<int>{second}) << "the next spawn has a zygote again";
  ASSERT_TRUE(down("t").ok());
}

// The zygote is one process every monitor depends on: when it dies, its blocks die with it and
// are reported as exited (the restart policy takes over), and the next spawn still works.
TEST_F(LockboxTest, ZygoteDeathEndsItsBlocksAndTheNextSpawnWorks) {
  std::string token = dir_ + "/orphan";
  auto a = boxed("a", {"daemonize", token, "wait"});
  ASSERT_TRUE(up(stack("s", {a})).ok());
  ASSERT_TRUE(run_until([&] { return processes_mentioning(token).size() >= 2; }, 10000));
  const int monitor = row("a").pid;
  const int zygote = std::stoi(status_field(monitor, "PPid"));
  ASSERT_NE(zygote, ::getpid());
  ASSERT_EQ(::kill(zygote, SIGKILL), 0);
  EXPECT_TRUE(run_until([&] { return processes_mentioning(token).empty(); }, 5000))
      << processes_mentioning(token).size() << " block processes outlived the zygote";
  EXPECT_TRUE(run_until([&] { return row("a").state != BlockState::running; }, 5000))
      << "the block is still reported running";
  auto b = boxed("b", {"stamp", dir_ + "/b-ran", "wait"});
  ASSERT_TRUE(up(stack("t", {b})).ok());
  EXPECT_TRUE(run_until([&] { return read_lines(dir_ + "/b-ran").size() == 1; }));
  ASSERT_TRUE(down("t").ok());
  ASSERT_TRUE(down("s").ok());
}

// "user:[4026531837]": the namespace of that kind a process is in ("" once it is gone).
std::string namespace_of(int pid, const std::string& kind) {
  char link[64] = "";
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
  if (::readlink(path.c_str(), link, sizeof link - 1) < 0) return "";
  return link;
}

// The processes `zygote` forked that are still running (its monitors and its spare).
std::vector<int> forked_by(int zygote) {
  std::vector<int> forked;
  for (int pid : processes_mentioning("--zygote")) {
    const std::string parent = status_field(pid, "PPid");  // "" once the process is gone
    if (pid != zygote && !parent.empty() && std::stoi(parent) == zygote) forked.push_back(pid);
  }
  return forked;
}

// The zygote's spare makes the namespaces of the kind the last request asked for while it
// waits (issue 25: unshare and the maps were 0.6-0.9 ms of each spawn), and the next block of
// that kind runs in them.
TEST_F(LockboxTest, TheZygotesSpareMakesTheNextBlocksNamespacesWhileItWaits) {
  const std::string our_user = namespace_of(::getpid(), "user");
  const std::string our_net = namespace_of(::getpid(), "net");
  auto first = boxed("first", {"wait"});
  ASSERT_TRUE(up(stack("s", {first})).ok());
  const int monitor = row("first").pid;
  const int zygote = std::stoi(status_field(monitor, "PPid"));
  int spare = -1;
  std::string spare_user;
  EXPECT_TRUE(run_until(
      [&] {
        for (int pid : forked_by(zygote)) {
          if (pid == monitor) continue;
          spare = pid;
          spare_user = namespace_of(pid, "user");
          if (!spare_user.empty() && spare_user != our_user && namespace_of(pid, "net") != our_net)
            return true;
        }
        return false;
      },
      5000))
      << "no spare (pid " << spare << ", " << spare_user
      << ") in a user and network namespace of its own";
  EXPECT_NE(spare_user, namespace_of(monitor, "user")) << "a namespace made for one sandbox only";
  EXPECT_EQ(namespace_of(spare, "cgroup"), namespace_of(::getpid(), "cgroup"))
      << "the cgroup namespace waits for the request (the block's cgroup is joined first)";
  EXPECT_EQ(namespace_of(spare, "mnt"), namespace_of(::getpid(), "mnt"))
      << "the mount namespace waits for the request (a copy of the host's mounts as they are "
         "then)";
  auto second = boxed("second", {"namespaces", dir_ + "/second", "wait"});
  ASSERT_TRUE(up(stack("t", {second})).ok());
  ASSERT_TRUE(run_until([&] { return read_lines(dir_ + "/second").size() == 1; }));
  const std::string seen = read_lines(dir_ + "/second")[0];
  EXPECT_NE(seen.find("uid=0 user=" + spare_user + " "), std::string::npos)
      << seen << " (the spare's user namespace: " << spare_user << ")";
  ASSERT_TRUE(down("t").ok());
  ASSERT_TRUE(down("s").ok());
}

// The processes `pid` forked that are still running.
std::vector<int> children_of(int pid) {
  std::vector<int> children;
  const std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
  std::istringstream listed(testing_support::read_proc_file(path));
  for (int child; listed >> child;) children.push_back(child);
  return children;
}

// A spare of `zygote` (none of `not_these`) that has forked its pid 1 ahead, and that pid 1;
// {-1, -1} when there is none yet.
std::pair<int, int> spare_and_its_pid_one(int zygote, const std::vector<int>& not_these) {
  for (int pid : forked_by(zygote)) {
    const std::vector<int> children = children_of(pid);
    if (children.size() == 1 &&
        std::find(not_these.begin(), not_these.end(), pid) == not_these.end())
      return {pid, children[0]};
  }
  return {-1, -1};
}

// The spare also forks the next block's pid 1 while it waits (sandbox/linux_init_ahead.h; issue
// 25: pid 1's fork, first touches and prologue were about 1 ms of a spawn). The block's pid 1 is
// that process; the mount namespace it builds the root in is made when the request comes, not
// before; and the block's limits, which the monitor sets for itself before a fork, pid 1 set
// for itself.
TEST_F(LockboxTest, TheZygotesSpareForksTheNextBlocksPidOneWhileItWaits) {
  const std::string our_mounts = namespace_of(::getpid(), "mnt");
  auto first = boxed("first", {"wait"});
  ASSERT_TRUE(up(stack("s", {first})).ok());
  const int monitor = row("first").pid;
  const int zygote = std::stoi(status_field(monitor, "PPid"));
  int spare = -1, init = -1;
  EXPECT_TRUE(run_until([&] {
    std::tie(spare, init) = spare_and_its_pid_one(zygote, {monitor});
    return spare > 0;
  })) << "no spare with a pid 1 forked ahead";
  ASSERT_GT(init, 0);
  const std::string nspid = status_field(init, "NSpid");
  EXPECT_EQ(nspid.substr(nspid.find_last_of(" \t") + 1), "1") << "NSpid:" << nspid;
  EXPECT_EQ(namespace_of(init, "mnt"), our_mounts)
      << "the mount namespace waits for the request (a copy of the host's mounts as they are "
         "then)";
  auto second = boxed("second", {"stamp", dir_ + "/second", "wait"});
  second.policy.limits.pids = 77;
  ASSERT_TRUE(up(stack("t", {second})).ok());
  ASSERT_TRUE(run_until([&] { return read_lines(dir_ + "/second").size() == 1; }));
  EXPECT_EQ(row("second").pid, spare) << "the spare was not used";
  EXPECT_EQ(children_of(spare), std::vector<int>{init}) << "the block's pid 1 was forked anew";
  EXPECT_NE(namespace_of(init, "mnt"), our_mounts);
  const std::vector<int> blocks = children_of(init);
  ASSERT_EQ(blocks.size(), 1u);
  // As a block started by a pid 1 forked on the spot: its stdio and nothing else, no signal
  // blocked (pid 1 blocks the forwarded ones from its fork on; the block's mask is reset).
  std::vector<std::string> fds;
  if (DIR* listed = ::opendir(("/proc/" + std::to_string(blocks[0]) + "/fd").c_str())) {
    while (dirent* entry = ::readdir(listed))
      if (entry->d_name[0] != '.') fds.push_back(entry->d_name);
    ::closedir(listed);
  }
  std::sort(fds.begin(), fds.end());
  EXPECT_EQ(fds, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(status_field(blocks[0], "SigBlk"), "\t0000000000000000");
  std::string nproc;
  for (const std::string& line : read_lines("/proc/" + std::to_string(blocks[0]) + "/limits"))
    if (line.rfind("Max processes", 0) == 0) nproc = line;
  // 77 where the kernel counts RLIMIT_NPROC per user namespace (5.14 on), the user's tasks + 77
  // before (sandbox/linux_limits.h): either way below what the block would have had without.
  const unsigned long long soft =
      std::strtoull(nproc.c_str() + std::strlen("Max processes"), nullptr, 10);
  rlimit ours{};
  ASSERT_EQ(::getrlimit(RLIMIT_NPROC, &ours), 0);
  EXPECT_GE(soft, 77u) << "the block's " << nproc;
  EXPECT_TRUE(ours.rlim_cur == RLIM_INFINITY || soft < ours.rlim_cur)
      << "the block's " << nproc << "; ours " << ours.rlim_cur;
  // The next spare's pid 1, waiting, dies with it when the zygote retires with its last block.
  int next_init = -1;
  EXPECT_TRUE(run_until([&] {
    next_init = spare_and_its_pid_one(zygote, {monitor, spare}).second;
    return next_init > 0;
  })) << "no next spare with a pid 1 forked ahead";
  ASSERT_TRUE(down("t").ok());
  ASSERT_TRUE(down("s").ok());
  EXPECT_TRUE(run_until([&] { return !testing_support::process_alive(next_init); }, 5000))
      << "pid 1 forked ahead (" << next_init << ") outlived its zygote";
}

// pid 1 forked ahead, while it waits, is in the next block's namespaces with the host's root:
// `stackie-lockbox --join` refuses it (a process that joined it would show the block the host's
// files through /proc/PID/root); and killed, it takes its spare along, and the next block of
// that kind still starts (its monitor forked on the spot).
TEST_F(LockboxTest, AZygotesWaitingPidOneIsNotJoinedAndItsDeathCostsNoBlock) {
  auto first = boxed("first", {"wait"});
  ASSERT_TRUE(up(stack("s", {first})).ok());
  const int monitor = row("first").pid;
  const int zygote = std::stoi(status_field(monitor, "PPid"));
  int spare = -1, init = -1;
  ASSERT_TRUE(run_until([&] {
    std::tie(spare, init) = spare_and_its_pid_one(zygote, {monitor});
    return spare > 0;
  })) << "no spare with a pid 1 forked ahead";
  const std::string command =
      lockbox_path_ + " --join " + std::to_string(init) + " -- /bin/true 2>&1";
  FILE* joined = ::popen(command.c_str(), "r");
  ASSERT_NE(joined, nullptr);
  std::string said;
  for (char buffer[256]; std::fgets(buffer, sizeof buffer, joined) != nullptr;) said += buffer;
  const int status = ::pclose(joined);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 125) << status << ": " << said;
  EXPECT_NE(said.find("not built yet"), std::string::npos) << said;

  ASSERT_EQ(::kill(init, SIGKILL), 0);
  EXPECT_TRUE(run_until([&] { return !testing_support::process_alive(spare); }, 5000))
      << "the spare outlived its pid 1";
  auto second = boxed("second", {"stamp", dir_ + "/second", "wait"});
  ASSERT_TRUE(up(stack("t", {second})).ok());
  EXPECT_TRUE(run_until([&] { return read_lines(dir_ + "/second").size() == 1; }))
      << "the next block did not start";
  EXPECT_NE(row("second").pid, spare);
  ASSERT_TRUE(down("t").ok());
  ASSERT_TRUE(down("s").ok());
}

// A spare made for one kind of sandbox (its own network or the host's, uid 0 inside or the
// user's) is given the next block of that kind, and never a block of another: each block gets
// the uid and network it asked for, whatever came before it, and namespaces of its own.
TEST_F(LockboxTest, AZygoteSpareMadeForOneKindOfSandboxNeverRunsABlockOfAnother) {
  const std::string our_user = namespace_of(::getpid(), "user");
  const std::string our_net = namespace_of(::getpid(), "net");
  const std::string our_uid = std::to_string(::getuid());
  struct Kind {
    std::string name;
    NetworkMode network;
    Identity identity;
  };
  const std::vector<Kind> kinds = {
      {"a", NetworkMode::none, Identity::root}, {"a2", NetworkMode::none, Identity::root},
      {"b", NetworkMode::host, Identity::user}, {"b2", NetworkMode::host, Identity::user},
      {"c", NetworkMode::none, Identity::user}, {"c2", NetworkMode::none, Identity::user},
      {"d", NetworkMode::host, Identity::root}, {"d2", NetworkMode::host, Identity::root},
      {"e", NetworkMode::none, Identity::root}};
  std::vector<std::string> users_seen;
  std::vector<int> monitors;
  int zygote = -1;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const Kind& kind = kinds[i];
    // The spare waiting for this block, made for the kind of the block before it.
    int spare = -1;
    if (zygote > 0) {
      EXPECT_TRUE(run_until(
          [&] {
            std::vector<int> forked = forked_by(zygote);
            for (int pid : forked)
              if (std::find(monitors.begin(), monitors.end(), pid) == monitors.end()) spare = pid;
            return forked.size() == monitors.size() + 1;
          },
          5000))
          << "no spare before block " << kind.name;
    }
    const std::string file = dir_ + "/" + kind.name;
    auto b = boxed(kind.name, {"namespaces", file, "wait"});
    b.policy.network = kind.network;
    b.policy.identity = kind.identity;
    ASSERT_TRUE(up(stack("s" + kind.name, {b})).ok()) << kind.name;
    const int monitor = row(kind.name).pid;
    monitors.push_back(monitor);
    if (zygote < 0) zygote = std::stoi(status_field(monitor, "PPid"));
    if (i > 0) {
      const bool same_kind =
          kinds[i - 1].network == kind.network && kinds[i - 1].identity == kind.identity;
      EXPECT_EQ(monitor == spare, same_kind)
          << kind.name << ": monitor " << monitor << ", the spare waiting for it " << spare
          << (same_kind ? " (made for this kind: it should have been used)"
                        : " (made for another kind: it should have been dropped)");
    }
    ASSERT_TRUE(run_until([&] { return read_lines(file).size() == 1; })) << kind.name;
    const std::string seen = read_lines(file)[0];
    const std::string uid = kind.identity == Identity::root ? "0" : our_uid;
    EXPECT_EQ(seen.rfind("uid=" + uid + " ", 0), 0u) << kind.name << ": " << seen;
    const bool host_net = seen.find(" net=" + our_net) != std::string::npos;
    EXPECT_EQ(host_net, kind.network == NetworkMode::host) << kind.name << ": " << seen;
    const size_t user_at = seen.find("user=") + 5;
    const std::string user = seen.substr(user_at, seen.find(' ', user_at) - user_at);
    EXPECT_NE(user, our_user) << kind.name;
    EXPECT_EQ(std::count(users_seen.begin(), users_seen.end(), user), 0)
        << kind.name << " shares a user namespace with an earlier block: " << user;
    users_seen.push_back(user);
  }
  for (const Kind& kind : kinds) EXPECT_TRUE(down("s" + kind.name).ok()) << kind.name;
}

// The daemon says which kind of sandbox a request is (ZygoteRequest::ahead). A monitor whose
// spare made the namespaces of another kind than its policy asks for refuses to run it there,
// and so does one asked for anything but the namespace lockbox.
TEST_F(LockboxTest, AZygoteMonitorRefusesWhatItsNamespacesWereNotMadeFor) {
  auto started = spawn_detail::Zygote::start(&loop_, lockbox_path_);
  ASSERT_TRUE(started.ok()) << started.error().message;
  std::unique_ptr<spawn_detail::Zygote> zygote = std::move(*started);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ASSERT_GE(null_fd, 0);
  const uint32_t own_network_root = zygote::namespaces_ahead(true, true);
  // A block that stays, so that the zygote stays and forks its spare for this kind.
  std::optional<int64_t> sleeper_exit;
  auto sleeper = zygote->spawn({lockbox_path_, "--backend", "namespaces", "--", "/bin/sleep", "60"},
                               {null_fd, null_fd, null_fd}, own_network_root,
                               [&](int64_t status, int) { sleeper_exit = status; });
  ASSERT_TRUE(sleeper.ok()) << sleeper.error().message;
  const int monitor = (*sleeper)->pid();
  const std::string our_net = namespace_of(::getpid(), "net");
  // Each request below says "own network, uid 0"; its arguments ask for something else.
  const std::vector<std::pair<std::vector<std::string>, std::string>> liars = {
      {{"--backend", "namespaces", "--net", "host"}, "another kind of sandbox"},
      {{"--backend", "namespaces", "--identity", "user"}, "another kind of sandbox"},
      {{"--backend", "landlock"}, "for --backend namespaces only"},
      {{"--backend", "auto"}, "for --backend namespaces only"}};
  for (const auto& [options, expected] : liars) {
    // The spare for it has made its namespaces (after the sleeper, or after the last liar).
    EXPECT_TRUE(run_until(
        [&] {
          for (int pid : forked_by(zygote->pid())) {
            const std::string net = namespace_of(pid, "net");
            if (pid != monitor && !net.empty() && net != our_net) return true;
          }
          return false;
        },
        5000))
        << "no spare made its namespaces";
    std::vector<std::string> argv = {lockbox_path_};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--error-fd", "3", "--", "/bin/true"});
    int error_pipe[2];
    ASSERT_EQ(::pipe2(error_pipe, O_CLOEXEC), 0);
    std::optional<int64_t> liar_exit;
    auto liar = zygote->spawn(argv, {null_fd, null_fd, null_fd, error_pipe[1]}, own_network_root,
                              [&](int64_t status, int) { liar_exit = status; });
    ::close(error_pipe[1]);
    ASSERT_TRUE(liar.ok()) << liar.error().message;
    EXPECT_TRUE(run_until([&] { return liar_exit.has_value(); }, 10000));
    (*liar)->orphan([] {});  // ended: let go, as a spawner's facade does
    EXPECT_EQ(liar_exit.value_or(-1), 125) << options[1] << ": the setup failure's status";
    std::string said;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(error_pipe[0], buffer, sizeof buffer)) > 0) said.append(buffer, n);
    ::close(error_pipe[0]);
    EXPECT_NE(said.find(expected), std::string::npos)
        << options[1] << " " << options.back() << ": " << said;
  }
  (*sleeper)->send_signal(SIGKILL);
  EXPECT_TRUE(run_until([&] { return sleeper_exit.has_value(); }, 10000));
  (*sleeper)->orphan([] {});
  ::close(null_fd);
  zygote.reset();
}

}  // namespace
}  // namespace stackie
