// The supervisor with real children (the blockhelper binary), through the passthrough
// spawner: ordering and gating, health checks, restarts and backoff, stop escalation, logs,
// re-apply, idleness. Every test ends with the loop closing cleanly.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "loop_fixture.h"
#include "spawn/spawner.h"
#include "stack/paths.h"
#include "supervisor/supervisor.h"

namespace stackie {
namespace {

using testing_support::LoopTest;
using testing_support::process_alive;
using testing_support::read_lines;

struct Event {
  std::string block;
  BlockState state;
  std::string reason;
  uint64_t at_ms;
};

class SupervisorTest : public LoopTest {
 protected:
  void SetUp() override {
    LoopTest::SetUp();
    if (HasFatalFailure()) return;
    passthrough_ = make_passthrough_spawner();
    make_supervisor();
  }
  void make_supervisor() {
    SupervisorConfig config;
    config.loop = &loop_;
    config.passthrough = passthrough_.get();
    config.restart = tuning_;
    config.logs = log_settings_;
    supervisor_ = std::make_unique<Supervisor>(config);
    supervisor_->set_observer([this](const BlockProgress& p) {
      events_.push_back({p.block, p.state, p.reason, uv_now(&loop_)});
    });
  }
  void TearDown() override {
    supervisor_.reset();
    passthrough_.reset();
    close_loop();
  }

  // up() and wait for its answer.
  Status up(ResolvedStack s, StackOptions options = {}, int timeout_ms = 15000) {
    std::optional<Status> result;
    supervisor_->up(std::move(s), options, nullptr, [&](Status st) { result = std::move(st); });
    EXPECT_TRUE(run_until([&] { return result.has_value(); }, timeout_ms)) << "up did not answer";
    return result.value_or(Error{-1, "timeout"});
  }
  Status down(const std::string& name, int timeout_ms = 15000) {
    std::optional<Status> result;
    supervisor_->down(name, [&](Status st) { result = std::move(st); });
    EXPECT_TRUE(run_until([&] { return result.has_value(); }, timeout_ms)) << "down did not end";
    return result.value_or(Error{-1, "timeout"});
  }
  const BlockStatus* status_of(const std::string& block) {
    static std::vector<BlockStatus> last;
    last = supervisor_->ps();
    for (const auto& s : last)
      if (s.block == block) return &s;
    return nullptr;
  }
  BlockState state_of(const std::string& block) {
    auto* s = status_of(block);
    return s ? s->state : BlockState::created;
  }
  // When `block` first entered `state`; UINT64_MAX when never.
  uint64_t first(const std::string& block, BlockState state) {
    for (const auto& e : events_)
      if (e.block == block && e.state == state) return e.at_ms;
    return UINT64_MAX;
  }
  size_t index_of(const std::string& block, BlockState state) {
    for (size_t i = 0; i < events_.size(); ++i)
      if (events_[i].block == block && events_[i].state == state) return i;
    return SIZE_MAX;
  }

  RestartTuning tuning_;
  LogSettings log_settings_;
  std::unique_ptr<Spawner> passthrough_;
  std::unique_ptr<Supervisor> supervisor_;
  std::vector<Event> events_;
};

HealthCheck tcp_check(int port) {
  HealthCheck check;
  check.kind = HealthCheck::Kind::tcp;
  check.port = port;
  check.interval = Milliseconds{50};
  check.timeout = Milliseconds{500};
  check.retries = 3;
  check.start_period = Milliseconds{3000};
  return check;
}

TEST_F(SupervisorTest, DependantStartsOnlyWhenItsDependencyIsRunning) {
  int port = testing_support::free_port();
  auto db = block("db", {"sleep", "300", "serve", std::to_string(port), "0"});
  db.health = tcp_check(port);
  auto api = block("api", {"wait"});
  api.depends_on = {"db"};
  ASSERT_TRUE(up(stack("s", {db, api})).ok());
  EXPECT_EQ(state_of("db"), BlockState::running);
  EXPECT_EQ(state_of("api"), BlockState::running);
  ASSERT_NE(first("db", BlockState::running), UINT64_MAX);
  // api did not even start before db was healthy, and db took its 300 ms to get there.
  EXPECT_GT(index_of("api", BlockState::starting), index_of("db", BlockState::running));
  EXPECT_GE(first("db", BlockState::running) - first("db", BlockState::starting), 250u);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, IndependentBlocksStartInParallel) {
  int p1 = testing_support::free_port(), p2 = testing_support::free_port();
  auto a = block("a", {"sleep", "400", "serve", std::to_string(p1), "0"});
  a.health = tcp_check(p1);
  auto b = block("b", {"sleep", "400", "serve", std::to_string(p2), "0"});
  b.health = tcp_check(p2);
  ASSERT_TRUE(up(stack("s", {a, b})).ok());
  // Both starting before either is running: the order of events proves it, not a clock.
  EXPECT_LT(index_of("b", BlockState::starting), index_of("a", BlockState::running));
  EXPECT_LT(index_of("a", BlockState::starting), index_of("b", BlockState::running));
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, HttpCheckComparesTheStatus) {
  int good = testing_support::free_port(), bad = testing_support::free_port();
  auto ok_block = block("ok", {"serve", std::to_string(good), "204"});
  ok_block.health = tcp_check(good);
  ok_block.health.kind = HealthCheck::Kind::http;
  ok_block.health.http_status = 204;
  ASSERT_TRUE(up(stack("s", {ok_block})).ok());
  EXPECT_EQ(state_of("ok"), BlockState::running);
  ASSERT_TRUE(down("s").ok());

  auto bad_block = block("bad", {"serve", std::to_string(bad), "500"});
  bad_block.health = tcp_check(bad);
  bad_block.health.kind = HealthCheck::Kind::http;
  bad_block.health.start_period = Milliseconds{0};
  auto result = up(stack("t", {bad_block}));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("HTTP status 500, expected 200"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(state_of("bad"), BlockState::failed);
  ASSERT_TRUE(down("t").ok());
}

TEST_F(SupervisorTest, ExecCheckGatesReadinessAndLaterFailuresRestart) {
  std::string flag = dir_ + "/healthy";
  std::string starts = dir_ + "/starts";
  auto b = block("svc", {"stamp", starts, "wait"});
  b.health.kind = HealthCheck::Kind::exec;
  b.health.argv = {helper_, "check-file", flag};
  b.health.interval = Milliseconds{50};
  b.health.retries = 2;
  b.health.start_period = Milliseconds{5000};
  b.restart = RestartPolicy::on_failure;
  bool answered = false;
  Status result;
  supervisor_->up(stack("s", {b}), {}, nullptr, [&](Status st) {
    answered = true;
    result = st;
  });
  run_for(300);
  EXPECT_FALSE(answered) << "ready before its exec check passed";
  EXPECT_EQ(state_of("svc"), BlockState::starting);
  { std::ofstream(flag.c_str()) << "ok"; }
  ASSERT_TRUE(run_until([&] { return answered; }, 3000));
  ASSERT_TRUE(result.ok()) << result.error().message;
  // Liveness: the check fails twice -> restart per policy (a second start).
  ::unlink(flag.c_str());
  ASSERT_TRUE(run_until([&] { return read_lines(starts).size() >= 2; }, 5000));
  EXPECT_GE(status_of("svc")->restarts, 1);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, BlockWithoutCheckIsRunningAfterItsStartPeriod) {
  auto b = block("quick", {"exit", "3"});
  b.health.start_period = Milliseconds{300};
  auto result = up(stack("s", {b}));
  ASSERT_FALSE(result.ok()) << "a block that dies within start_period is not running";
  EXPECT_NE(result.error().message.find("block quick failed: exit status 3"), std::string::npos)
      << result.error().message;
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, RestartBackoffDoublesThenGivesUpAsFailed) {
  tuning_.max_restarts = 4;
  make_supervisor();
  std::string starts = dir_ + "/starts";
  auto b = block("crashy", {"stamp", starts, "eprint", "boom", "exit", "1"});
  b.restart = RestartPolicy::on_failure;
  // Never alive long enough to count as running, even on a loaded machine.
  b.health.start_period = Milliseconds{1000};
  auto result = up(stack("s", {b}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(state_of("crashy"), BlockState::failed);
  EXPECT_NE(status_of("crashy")->reason.find("gave up after 4 restarts"), std::string::npos)
      << status_of("crashy")->reason;
  EXPECT_NE(result.error().message.find("boom"), std::string::npos) << "last log lines shown";
  auto lines = read_lines(starts);
  ASSERT_EQ(lines.size(), 5u);  // the first start and 4 restarts
  std::vector<long> gaps;
  for (size_t i = 1; i < lines.size(); ++i)
    gaps.push_back(std::stol(lines[i].substr(lines[i].find(' '))) -
                   std::stol(lines[i - 1].substr(lines[i - 1].find(' '))));
  long expected[] = {100, 200, 400, 800};
  // Never before the backoff's delay; how much later depends on the runner's load.
  for (size_t i = 0; i < gaps.size(); ++i) EXPECT_GE(gaps[i], expected[i]) << "gap " << i;
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, AlwaysRestartsEvenAfterSuccess) {
  std::string starts = dir_ + "/starts";
  auto b = block("cron", {"stamp", starts, "exit", "0"});
  b.restart = RestartPolicy::always;
  supervisor_->up(stack("s", {b}), {}, nullptr, [](Status) {});
  ASSERT_TRUE(run_until([&] { return read_lines(starts).size() >= 3; }, 3000));
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, StopEscalatesToSigkillAfterStopTimeout) {
  auto b = block("stubborn", {"ignore", "TERM", "print", "ready", "wait"});
  b.stop_timeout = Milliseconds{300};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  int pid = status_of("stubborn")->pid;
  ASSERT_TRUE(process_alive(pid));
  // It ignores SIGTERM once it has said so.
  ASSERT_TRUE(run_until([&] {
    auto tail = supervisor_->tail("s", "stubborn", 10);
    return std::any_of(tail->begin(), tail->end(),
                       [](const LogLine& l) { return l.text == "ready"; });
  }));
  uint64_t t0 = uv_now(&loop_);
  ASSERT_TRUE(down("s").ok());
  uv_update_time(&loop_);
  EXPECT_GE(uv_now(&loop_) - t0, 290u);
  EXPECT_FALSE(process_alive(pid));
  bool noted = false;
  for (const auto& e : events_)
    if (e.block == "stubborn" && e.state == BlockState::stopped)
      noted = e.reason.find("killed: did not stop within 300 ms") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(SupervisorTest, StopSignalIsTheBlocksOwn) {
  std::string out = dir_ + "/bye";
  auto b = block("pg", {"ignore", "TERM", "exit-on", "INT", "0", "print", "ready", "wait"});
  b.stop_signal = SIGINT;
  b.stop_timeout = Milliseconds{5000};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(run_until([&] {
    auto tail = supervisor_->tail("s", "pg", 10);
    return std::any_of(tail->begin(), tail->end(),
                       [](const LogLine& l) { return l.text == "ready"; });
  }));
  ASSERT_TRUE(down("s").ok());
  // It stopped on SIGINT by itself: had the daemon sent SIGTERM (which it ignores), only the
  // 5 s stop timeout's SIGKILL would have ended it, and the reason would say so.
  bool stopped = false;
  for (const auto& e : events_) {
    if (e.block != "pg" || e.state != BlockState::stopped) continue;
    stopped = true;
    EXPECT_EQ(e.reason.find("killed"), std::string::npos) << e.reason;
  }
  EXPECT_TRUE(stopped);
}

TEST_F(SupervisorTest, DownStopsInReverseDependencyOrder) {
  auto db = block("db", {"wait"});
  auto cache = block("cache", {"wait"});
  auto api = block("api", {"wait"});
  api.depends_on = {"db", "cache"};
  auto web = block("web", {"wait"});
  web.depends_on = {"api"};
  ASSERT_TRUE(up(stack("s", {db, cache, api, web})).ok());
  events_.clear();
  ASSERT_TRUE(down("s").ok());
  EXPECT_LT(index_of("web", BlockState::stopped), index_of("api", BlockState::stopping));
  EXPECT_LT(index_of("api", BlockState::stopped), index_of("db", BlockState::stopping));
  EXPECT_LT(index_of("api", BlockState::stopped), index_of("cache", BlockState::stopping));
  EXPECT_FALSE(supervisor_->has_stack("s"));
}

TEST_F(SupervisorTest, InitStepsRunOncePerFreshVolume) {
  std::string volume = dir_ + "/volume";
  ::mkdir(volume.c_str(), 0700);
  auto b = block("pg", {"wait"});
  InitStep initdb;
  initdb.run = {helper_, "stamp", volume + "/initdb-runs"};
  InitStep marker;
  marker.append_path = volume + "/PG_VERSION";
  marker.append_text = "16\n";
  InitStep guard;
  guard.if_not_exists = volume + "/PG_VERSION";
  guard.then = {initdb, marker};
  b.init = {guard};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(down("s").ok());
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(down("s").ok());
  EXPECT_EQ(read_lines(volume + "/initdb-runs").size(), 1u);
  EXPECT_EQ(testing_support::read_file(volume + "/PG_VERSION"), "16\n");
}

TEST_F(SupervisorTest, FailingInitStepFailsTheBlockWithItsOutput) {
  auto b = block("pg", {"wait"});
  InitStep bad;
  bad.run = {helper_, "eprint", "initdb: directory not empty", "exit", "4"};
  b.init = {bad};
  b.restart = RestartPolicy::always;
  auto result = up(stack("s", {b}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(state_of("pg"), BlockState::failed);
  EXPECT_NE(status_of("pg")->reason.find("init failed (exit status 4)"), std::string::npos)
      << status_of("pg")->reason;
  EXPECT_NE(status_of("pg")->reason.find("initdb: directory not empty"), std::string::npos);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, CommandNotFoundIsAFailureWithTheReason) {
  auto b = block("ghost", {});
  b.command = {"/nonexistent/stackie-ghost"};
  auto result = up(stack("s", {b}));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("/nonexistent/stackie-ghost"), std::string::npos)
      << result.error().message;
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, LogFilesRotateBySize) {
  log_settings_.file_max_bytes = 20000;
  log_settings_.file_count = 3;
  make_supervisor();
  auto b = block("chatty", {"flood", "2000", "wait"});
  ASSERT_TRUE(up(stack("s", {b})).ok());
  std::string logs = dir_ + "/storage/logs/test-chatty/stdout.log";
  ASSERT_TRUE(run_until([&] {
    auto tail = supervisor_->tail("s", "chatty", 1);
    return tail.ok() && tail->size() == 1 && (*tail)[0].text.size() == 99 &&
           ::access((logs + ".2").c_str(), F_OK) == 0;
  }));
  struct stat st;
  ASSERT_EQ(::stat(logs.c_str(), &st), 0);
  EXPECT_LE(st.st_size, 20000);
  EXPECT_EQ(::access((logs + ".3").c_str(), F_OK), -1) << "only 3 files are kept";
  ASSERT_TRUE(down("s").ok());
}

struct CollectingSink : LogSink {
  bool accept = true;
  std::vector<LogLine> lines;
  bool offer(const LogLine& line) override {
    if (!accept) return false;
    lines.push_back(line);
    return true;
  }
  bool saw(const std::string& text) const {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const LogLine& l) { return l.text == text; });
  }
};

TEST_F(SupervisorTest, RingAndFollowerSurviveARestart) {
  std::string starts = dir_ + "/starts";
  auto b = block("flappy", {"stamp", starts, "print", "hello", "sleep", "200", "exit", "1"});
  b.restart = RestartPolicy::on_failure;
  supervisor_->up(stack("s", {b}), {}, nullptr, [](Status) {});
  ASSERT_TRUE(run_until([&] { return supervisor_->has_stack("s"); }));
  CollectingSink sink;
  auto id = supervisor_->follow("s", "flappy", &sink);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(run_until([&] { return read_lines(starts).size() >= 3; }, 5000));
  run_for(100);
  size_t hellos = std::count_if(sink.lines.begin(), sink.lines.end(),
                                [](const LogLine& l) { return l.text == "hello"; });
  EXPECT_GE(hellos, 2u) << "the follower kept following across restarts";
  auto tail = supervisor_->tail("s", "flappy", 100);
  ASSERT_TRUE(tail.ok());
  EXPECT_GE(
      std::count_if(tail->begin(), tail->end(), [](const LogLine& l) { return l.text == "hello"; }),
      2);
  supervisor_->unfollow("s", "flappy", *id);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, StuckFollowerDoesNotStallAFloodingBlock) {
  auto b = block("flood", {"flood", "300000", "print", "done"});
  ASSERT_TRUE(up(stack("s", {b})).ok() || true);
  CollectingSink stuck;
  stuck.accept = false;
  auto id = supervisor_->follow("s", "flood", &stuck);
  ASSERT_TRUE(id.ok());
  // 30 MB through the pipe while the follower takes nothing: the block still finishes.
  ASSERT_TRUE(run_until([&] { return state_of("flood") == BlockState::stopped; }, 20000))
      << to_string(state_of("flood"));
  auto tail = supervisor_->tail("s", "flood", 3);
  ASSERT_TRUE(tail.ok());
  bool done = false;
  for (const auto& l : *tail) done = done || l.text == "done";
  EXPECT_TRUE(done);
  EXPECT_TRUE(stuck.lines.empty());
  // It wakes up: one marker with the count, then lines again.
  stuck.accept = true;
  supervisor_->stack("s");
  auto restarted = supervisor_->restart_block("s", "flood");
  ASSERT_TRUE(restarted.ok());
  ASSERT_TRUE(run_until([&] { return !stuck.lines.empty(); }, 5000));
  EXPECT_EQ(stuck.lines[0].stream, LogStream::daemon);
  EXPECT_NE(stuck.lines[0].text.find("lines skipped"), std::string::npos) << stuck.lines[0].text;
  supervisor_->unfollow("s", "flood", *id);
  ASSERT_TRUE(down("s").ok());
}

// A block writes its output into a pipe, not a socket, and a flood grows that pipe to 1 MiB
// (issue 25: the block writes on while the daemon is busy). libuv's UV_CREATE_PIPE made a
// socketpair, on which the daemon's F_SETPIPE_SZ silently did nothing.
TEST_F(SupervisorTest, ABlocksOutputIsAPipeThatAFloodGrows) {
  const std::string go = dir_ + "/go";
  auto quiet = block("quiet", {"stdio", "wait"});
  auto flood = block("flood", {"await", go, "flood", "300000", "stdio", "wait"});
  ASSERT_TRUE(up(stack("s", {quiet, flood})).ok());
  // The flood starts while the loop does not run: it fills the pipe, so that the daemon's first
  // read of it takes a whole buffer, which is what makes the daemon grow a pipe.
  std::ofstream(go).close();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  auto report_of = [&](const std::string& name) {
    auto tail = supervisor_->tail("s", name, 1);
    return tail.ok() && !tail->empty() ? tail->back().text : std::string();
  };
  ASSERT_TRUE(run_until([&] { return report_of("quiet").rfind("stdout ", 0) == 0; }, 5000));
  ASSERT_TRUE(run_until([&] { return report_of("flood").rfind("stdout ", 0) == 0; }, 20000));
#ifdef __linux__
  EXPECT_EQ(report_of("quiet"), "stdout fifo 65536");
  EXPECT_EQ(report_of("flood"), "stdout fifo 1048576") << "the flood grew the pipe";
#else
  EXPECT_EQ(report_of("quiet").rfind("stdout fifo", 0), 0u) << report_of("quiet");
#endif
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, OverlongLinesAreSplit) {
  log_settings_.max_line = 1000;
  make_supervisor();
  auto b = block("long", {"longline", "2500", "wait"});
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(run_until([&] {
    auto tail = supervisor_->tail("s", "long", 10);
    size_t total = 0;
    for (const auto& l : *tail)
      if (l.stream == LogStream::out) total += l.text.size();
    return total == 2500;
  }));
  auto tail = supervisor_->tail("s", "long", 10);
  std::vector<size_t> sizes;
  for (const auto& l : *tail)
    if (l.stream == LogStream::out) sizes.push_back(l.text.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{1000, 1000, 500}));
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, ReapplyRestartsOnlyTheChangedBlock) {
  auto db = block("db", {"wait"});
  db.serves = {{"pg", "postgres", 5432, 0}};
  auto api = block("api", {"print", "v1", "wait"});
  api.depends_on = {"db"};
  auto worker = block("worker", {"wait"});
  worker.depends_on = {"db"};
  worker.consumes = {{"database", "db", "pg", 5432}};
  ASSERT_TRUE(up(stack("s", {db, api, worker})).ok());
  int db_pid = status_of("db")->pid, api_pid = status_of("api")->pid;
  int worker_pid = status_of("worker")->pid;

  auto api2 = api;
  api2.command = block("api", {"print", "v2", "wait"}).command;
  ASSERT_TRUE(up(stack("s", {db, api2, worker})).ok());
  EXPECT_EQ(status_of("db")->pid, db_pid);
  EXPECT_EQ(status_of("worker")->pid, worker_pid);
  EXPECT_NE(status_of("api")->pid, api_pid);
  EXPECT_FALSE(process_alive(api_pid));

  // The port a consumer uses changes: the provider and its consumer restart, api does not.
  api_pid = status_of("api")->pid;
  auto db2 = db;
  db2.serves[0].port = 5433;
  ASSERT_TRUE(up(stack("s", {db2, api2, worker})).ok());
  EXPECT_NE(status_of("db")->pid, db_pid);
  EXPECT_NE(status_of("worker")->pid, worker_pid);
  EXPECT_EQ(status_of("api")->pid, api_pid);

  // A block removed from the file goes away.
  ASSERT_TRUE(up(stack("s", {db2, api2})).ok());
  EXPECT_EQ(status_of("worker"), nullptr);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, IdleMeansNoTimersAndNoWakeups) {
  auto a = block("a", {"wait"});
  auto b = block("b", {"wait"});
  b.depends_on = {"a"};
  ASSERT_TRUE(up(stack("s", {a, b})).ok());
  run_for(50);
  int active_timers = 0;
  uv_walk(
      &loop_,
      [](uv_handle_t* h, void* arg) {
        if (h->type == UV_TIMER && uv_is_active(h)) ++*static_cast<int*>(arg);
      },
      &active_timers);
  EXPECT_EQ(active_timers, 0);
  // Count loop iterations over 500 ms, woken only by our own single 500 ms timer.
  uv_prepare_t prepare;
  int iterations = 0;
  uv_prepare_init(&loop_, &prepare);
  prepare.data = &iterations;
  uv_prepare_start(&prepare, [](uv_prepare_t* p) { ++*static_cast<int*>(p->data); });
  uv_timer_t wake;
  uv_timer_init(&loop_, &wake);
  uv_timer_start(
      &wake, [](uv_timer_t* t) { uv_stop(t->loop); }, 500, 0);
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_LE(iterations, 2) << "the loop woke up while idle";
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
  uv_run(&loop_, UV_RUN_NOWAIT);
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, VolumesAndTempDirAreCreatedPrivateBeforeTheBlockStarts) {
  auto b = block("a", {"print", "hi", "wait"});
  b.policy.read_write = {{dir_ + "/volumes/s/a/data", ""}, {dir_, ""}};
  b.policy.host_tmp_dir = dir_ + "/tmp/s-a";
  ASSERT_TRUE(up(stack("s", {b})).ok());
  for (const std::string& path : {dir_ + "/volumes/s/a/data", dir_ + "/tmp/s-a"}) {
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0) << path << " was not created";
    EXPECT_TRUE(S_ISDIR(info.st_mode)) << path;
    EXPECT_EQ(info.st_mode & 0777, 0700u) << path;
  }
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, EphemeralStorageIsRemovedOnDown) {
  std::string base = ephemeral_base(dir_, "");
  ::mkdir(base.c_str(), 0700);
  auto s = stack("eph", {block("a", {"print", "hi", "wait"})});
  s.storage_root = base + "/eph-" + std::to_string(::getpid());
  StackOptions options;
  options.ephemeral = true;
  options.ephemeral_base = base;
  ASSERT_TRUE(up(s, options).ok());
  EXPECT_EQ(::access((s.storage_root + "/logs/test-a").c_str(), F_OK), 0);
  ASSERT_TRUE(down("eph").ok());
  EXPECT_EQ(::access(s.storage_root.c_str(), F_OK), -1) << "ephemeral storage left behind";
}

TEST_F(SupervisorTest, PassthroughDownKillsTheWholeProcessGroup) {
  // A child that stays in the group (no setsid) dies with the block.
  std::string pidfile = dir_ + "/child";
  auto b = block("sh", {});
  b.command = {"/bin/sh", "-c", "sleep 60 & echo $! > " + pidfile + "; wait"};
  ASSERT_TRUE(up(stack("s", {b})).ok());
  ASSERT_TRUE(run_until([&] { return read_lines(pidfile).size() == 1; }));
  int child = std::stoi(read_lines(pidfile)[0]);
  EXPECT_TRUE(process_alive(child));
  ASSERT_TRUE(down("s").ok());
  EXPECT_TRUE(run_until([&] { return !process_alive(child); }, 2000));
  EXPECT_EQ(status_of("sh"), nullptr);
  auto kind = supervisor_->ps();
  (void)kind;
}

TEST_F(SupervisorTest, PsReportsTheSandboxKind) {
  ASSERT_TRUE(up(stack("s", {block("a", {"wait"})})).ok());
  ASSERT_NE(status_of("a"), nullptr);
  EXPECT_EQ(to_string(status_of("a")->sandbox), "passthrough");
  EXPECT_EQ(status_of("a")->sandbox_id, "test-a");
  ASSERT_TRUE(down("s").ok());
}

TEST_F(SupervisorTest, SandboxedBlockWithoutALauncherFailsClosed) {
  auto b = block("boxed", {"wait"});
  b.sandboxed = true;
  auto result = up(stack("s", {b}));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("stackie-lockbox not found"), std::string::npos)
      << result.error().message;
  ASSERT_TRUE(down("s").ok());
}

// ---- mode: shared (stack/shared_mode.h) -------------------------------------------------------

// A block of a stack that stands for shared instance `instance`, with one setting.
ResolvedBlock shared_request(ResolvedBlock b, const std::string& instance,
                             const std::string& setting) {
  b.shared_instance = instance;
  b.sandbox_id = "shared.redis";
  b.policy.name = b.sandbox_id;
  b.shared_settings = {{"definition", "/catalog/stackie.redis.yml"}, {"vars.appendonly", setting}};
  return b;
}

std::vector<BlockStatus> shared_rows(const Supervisor& supervisor) {
  std::vector<BlockStatus> rows;
  for (const auto& row : supervisor.ps())
    if (row.stack == "@shared") rows.push_back(row);
  return rows;
}

TEST_F(SupervisorTest, SharedInstanceStartsOnceAndStopsWithTheLastStackThatUsesIt) {
  // Two stacks, each naming the instance in its own way, each with a consumer that waits for it.
  auto cache = shared_request(block("cache", {"wait"}), "stackie.redis", "yes");
  auto app = block("app", {"wait"});
  app.depends_on = {"cache"};
  auto redis = shared_request(block("stackie.redis", {"wait"}), "stackie.redis", "yes");
  auto worker = block("worker", {"wait"});
  worker.depends_on = {"stackie.redis"};
  worker.sandbox_id = "test-worker";
  ASSERT_TRUE(up(stack("one", {cache, app})).ok());
  ASSERT_EQ(shared_rows(*supervisor_).size(), 1u);
  int pid = shared_rows(*supervisor_)[0].pid;
  ASSERT_GT(pid, 0);
  EXPECT_EQ(state_of("app"), BlockState::running);

  ASSERT_TRUE(up(stack("two", {redis, worker})).ok());
  auto rows = shared_rows(*supervisor_);
  ASSERT_EQ(rows.size(), 1u) << "a second instance was started";
  EXPECT_EQ(rows[0].block, "stackie.redis");
  EXPECT_EQ(rows[0].pid, pid);
  EXPECT_EQ(rows[0].used_by, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(state_of("worker"), BlockState::running);
  // Each stack's ps shows it once, beside its own blocks; no stack lists it as its own.
  auto one = supervisor_->ps_with_shared("one");
  EXPECT_EQ(one.size(), 2u);
  EXPECT_EQ(supervisor_->ps("one").size(), 1u);

  // The first stack's down leaves it serving the second.
  ASSERT_TRUE(down("one").ok());
  rows = shared_rows(*supervisor_);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].pid, pid);
  EXPECT_EQ(rows[0].state, BlockState::running);
  EXPECT_EQ(rows[0].used_by, (std::vector<std::string>{"two"}));
  EXPECT_TRUE(process_alive(pid));

  // The last one's down stops it, and answers only then.
  ASSERT_TRUE(down("two").ok());
  EXPECT_TRUE(shared_rows(*supervisor_).empty());
  EXPECT_FALSE(supervisor_->has_stack("@shared"));
  EXPECT_TRUE(run_until([&] { return !process_alive(pid); }, 2000));
  // Its worker stopped before it.
  EXPECT_LT(index_of("worker", BlockState::stopped),
            index_of("stackie.redis", BlockState::stopping));
}

TEST_F(SupervisorTest, SharedInstanceAskedForWithOtherSettingsIsRefusedNamingThem) {
  ASSERT_TRUE(
      up(stack("one", {shared_request(block("cache", {"wait"}), "stackie.redis", "yes")})).ok());
  auto other = shared_request(block("stackie.redis", {"wait"}), "stackie.redis", "no");
  auto consumer = block("worker", {"wait"});
  consumer.depends_on = {"stackie.redis"};
  ResolvedStack two = stack("two", {other, consumer});
  Status checked = supervisor_->check_shared(two);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().message,
            "block 'stackie.redis' of stack 'two' (mode shared) asks for vars.appendonly other "
            "than shared instance stackie.redis started by stack 'one' (used by one): ask for "
            "the same vars.appendonly, or use mode own");
  // up() refuses it too, with nothing of it started and the instance as it was.
  auto result = up(two);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, checked.error().message);
  EXPECT_FALSE(supervisor_->has_stack("two"));
  EXPECT_EQ(status_of("worker"), nullptr);
  ASSERT_EQ(shared_rows(*supervisor_).size(), 1u);
  EXPECT_EQ(shared_rows(*supervisor_)[0].used_by, (std::vector<std::string>{"one"}));
  ASSERT_TRUE(down("one").ok());
  EXPECT_FALSE(supervisor_->has_stack("@shared"));
}

TEST_F(SupervisorTest, TheOnlyStackUsingASharedInstanceMayChangeItsSettings) {
  ASSERT_TRUE(
      up(stack("one", {shared_request(block("cache", {"wait"}), "stackie.redis", "yes")})).ok());
  int before = shared_rows(*supervisor_)[0].pid;
  ASSERT_TRUE(
      up(stack("one", {shared_request(block("cache", {"wait"}), "stackie.redis", "no")})).ok());
  auto rows = shared_rows(*supervisor_);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].pid, before) << "the instance kept its old settings";
  // Left out of the stack by a re-apply: no one uses it, so it stops.
  ASSERT_TRUE(up(stack("one", {block("own", {"wait"})})).ok());
  EXPECT_TRUE(run_until([&] { return !supervisor_->has_stack("@shared"); }, 5000));
  ASSERT_TRUE(down("one").ok());
}

}  // namespace
}  // namespace stackie
