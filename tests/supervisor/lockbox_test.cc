// The lockbox spawner with the real stackie-lockbox: setup failures reach the user verbatim,
// stop reaches everything in the sandbox (daemonised grandchildren included), exec health
// checks run inside through --join, and kill -9 of the daemon leaves no block process alive.
// Built only once the real launcher is in the tree (see meson.build); run as an unprivileged
// user (suite 'sandbox').
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "loop_fixture.h"
#include "spawn/spawner.h"
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

  std::string lockbox_path_;
  std::unique_ptr<Spawner> lockbox_, passthrough_;
  std::unique_ptr<Supervisor> supervisor_;
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

}  // namespace
}  // namespace stackie
