// Pure pieces of the supervisor: the state table, the restart policy and backoff, line
// splitting, rotation, the ring and followers, the init script.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "supervisor/block_logs.h"
#include "supervisor/block_state.h"
#include "supervisor/block_storage.h"
#include "supervisor/daemon_handlers.h"
#include "supervisor/exit_description.h"
#include "supervisor/init_script.h"
#include "supervisor/restart_policy.h"
#include "support/temp_dir.h"

namespace stackie {
namespace {

// Every signal the system knows, by name, as the daemon links it (stackie kill --signal, ps):
// a stop-signal table of the same function name used to stand in for it, and knew 8 signals.
TEST(ExitDescription, AnySignalTheSystemKnowsIsNamedAndParsed) {
  ExitStatus killed;
  killed.term_signal = SIGSEGV;
  EXPECT_EQ(describe_exit(killed, SandboxKind::passthrough), "killed by SIGSEGV");
  EXPECT_EQ(parse_signal_text("CONT"), SIGCONT);
  EXPECT_EQ(parse_signal_text("sigstop"), SIGSTOP);
  EXPECT_EQ(parse_signal_text("TERM"), SIGTERM);
  EXPECT_EQ(parse_signal_text("NOPE"), 0);
}

// A followed line is written by hand on the daemon's hot path (issue 25): the text a client
// gets must be exactly the Json the other paths build, whatever bytes the block wrote.
TEST(LogLineEvent, TheWriterMatchesTheJsonItStandsFor) {
  const std::string nasty = std::string("quote \" back \\ tab \t nul ") + '\0' + " bad \xff\xfe" +
                            " \xe2\x82\xac ctl \x01\x1f end";
  for (const std::string& text : {std::string(), std::string("LOG:  ready"), nasty}) {
    for (LogLevel level : {LogLevel::unknown, LogLevel::warn}) {
      LogLine line{7, 1764720000123, LogStream::err, level, text};
      std::string written;
      write_log_line_event(written, "sh\"op", "d\x01b", line, "2026-12-03T00:00:00.123Z");
      EXPECT_EQ(written,
                to_json(log_line_event("sh\"op", "d\x01b", line, "2026-12-03T00:00:00.123Z")));
    }
  }
}

TEST(BlockState, NamesAreTheDocumentedOnes) {
  EXPECT_EQ(to_string(BlockState::created), "created");
  EXPECT_EQ(to_string(BlockState::starting), "starting");
  EXPECT_EQ(to_string(BlockState::running), "running");
  EXPECT_EQ(to_string(BlockState::stopping), "stopping");
  EXPECT_EQ(to_string(BlockState::stopped), "stopped");
  EXPECT_EQ(to_string(BlockState::failed), "failed");
  EXPECT_EQ(to_string(BlockState::backoff), "backoff");
}

// Every one of the 7 x 9 cells, against a table written here independently of block_state.cc:
// "S" a move to state S, "-" ignored (nothing to do there), "defer" kept for later. A cell
// that changes in block_state.cc must change here too, on purpose.
TEST(BlockState, EveryStateAndEventCell) {
  using S = BlockState;
  using E = BlockEvent;
  const std::vector<S> states = {S::created, S::starting, S::running, S::stopping,
                                 S::stopped, S::failed,   S::backoff};
  const std::vector<E> events = {E::start,         E::ready,        E::unhealthy,
                                 E::stop,          E::exited_clean, E::exited_restart,
                                 E::exited_failed, E::setup_failed, E::backoff_elapsed};
  ASSERT_EQ(states.size(), kBlockStateCount);
  ASSERT_EQ(events.size(), kBlockEventCount);
  // Columns: start ready unhealthy stop exited_clean exited_restart exited_failed setup_failed
  // backoff_elapsed.
  const std::vector<std::vector<std::string>> expected = {
      /* created  */ {"starting", "-", "-", "stopped", "-", "-", "-", "-", "-"},
      /* starting */
      {"-", "running", "stopping", "stopping", "stopped", "backoff", "failed", "failed", "-"},
      /* running  */
      {"-", "-", "stopping", "stopping", "stopped", "backoff", "failed", "failed", "-"},
      /* stopping */ {"defer", "-", "-", "-", "stopped", "backoff", "failed", "failed", "-"},
      /* stopped  */ {"starting", "-", "-", "-", "-", "-", "-", "-", "-"},
      /* failed   */ {"starting", "-", "-", "-", "-", "-", "-", "-", "-"},
      /* backoff  */ {"starting", "-", "-", "stopped", "-", "-", "-", "-", "starting"},
  };
  int cells = 0;
  for (std::size_t i = 0; i < states.size(); ++i)
    for (std::size_t j = 0; j < events.size(); ++j) {
      Step got = step(states[i], events[j]);
      std::string seen = got.outcome == Outcome::move    ? std::string(to_string(got.to))
                         : got.outcome == Outcome::defer ? "defer"
                                                         : "-";
      EXPECT_EQ(seen, expected[i][j]) << to_string(states[i]) << " x " << to_string(events[j]);
      if (got.outcome != Outcome::move) {
        EXPECT_FALSE(got.why.empty()) << to_string(states[i]) << " x " << to_string(events[j])
                                      << " does nothing without saying why";
      }
      EXPECT_EQ(next_state(states[i], events[j]).has_value(), got.outcome == Outcome::move);
      ++cells;
    }
  EXPECT_EQ(cells, 63);
}

// No request of the user is dropped: a start is a move or deferred in every state where the
// block is not already on its way up, and a stop ends every state that has or waits for a
// process.
TEST(BlockState, NoStartOrStopIsDroppedSilently) {
  using S = BlockState;
  for (S state : {S::created, S::stopping, S::stopped, S::failed, S::backoff})
    EXPECT_NE(step(state, BlockEvent::start).outcome, Outcome::ignore) << to_string(state);
  for (S state : {S::created, S::starting, S::running, S::backoff})
    EXPECT_EQ(step(state, BlockEvent::stop).outcome, Outcome::move) << to_string(state);
}

TEST(RestartBackoff, DoublesFrom100msTo30sThenGivesUp) {
  RestartTuning tuning;
  tuning.max_restarts = 12;
  RestartBackoff backoff(tuning);
  std::vector<long> delays;
  for (int i = 0; i < 12; ++i) delays.push_back(backoff.next(Milliseconds{5})->count());
  EXPECT_EQ(delays, (std::vector<long>{100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000,
                                       30000, 30000}));
  EXPECT_FALSE(backoff.next(Milliseconds{5}).has_value());
  EXPECT_EQ(backoff.restarts(), 12);
}

TEST(RestartBackoff, AStableRunResetsTheSequence) {
  RestartBackoff backoff;
  EXPECT_EQ(backoff.next(Milliseconds{1})->count(), 100);
  EXPECT_EQ(backoff.next(Milliseconds{1})->count(), 200);
  EXPECT_EQ(backoff.next(Milliseconds{29999})->count(), 400);
  EXPECT_EQ(backoff.next(Milliseconds{30000})->count(), 100);
  EXPECT_EQ(backoff.restarts(), 1);
}

TEST(RestartPolicy, Decisions) {
  EXPECT_EQ(decide_after_exit(RestartPolicy::no, true, false), AfterExit::stop);
  EXPECT_EQ(decide_after_exit(RestartPolicy::no, false, false), AfterExit::fail);
  EXPECT_EQ(decide_after_exit(RestartPolicy::on_failure, true, false), AfterExit::stop);
  EXPECT_EQ(decide_after_exit(RestartPolicy::on_failure, false, false), AfterExit::restart);
  EXPECT_EQ(decide_after_exit(RestartPolicy::on_failure, true, true), AfterExit::restart);
  EXPECT_EQ(decide_after_exit(RestartPolicy::always, true, false), AfterExit::restart);
  EXPECT_EQ(decide_after_exit(RestartPolicy::no, true, true), AfterExit::fail);
}

std::vector<std::string> split(LineSplitter& splitter, std::string_view data) {
  std::vector<std::string> lines;
  splitter.feed(data, [&](std::string_view line) { lines.emplace_back(line); });
  return lines;
}

TEST(LineSplitter, JoinsPiecesAndKeepsEmptyLines) {
  LineSplitter splitter(100);
  EXPECT_TRUE(split(splitter, "hel").empty());
  EXPECT_EQ(split(splitter, "lo\n\nwor"), (std::vector<std::string>{"hello", ""}));
  std::vector<std::string> rest;
  splitter.flush([&](std::string_view line) { rest.emplace_back(line); });
  EXPECT_EQ(rest, (std::vector<std::string>{"wor"}));
}

TEST(LineSplitter, OverlongLinesAreSplitNotLost) {
  LineSplitter splitter(4);
  EXPECT_EQ(split(splitter, "abcdefghij\n"), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  EXPECT_EQ(split(splitter, "abcd\nxy\n"), (std::vector<std::string>{"abcd", "xy"}));
  EXPECT_EQ(split(splitter, "ab"), (std::vector<std::string>{}));
  EXPECT_EQ(split(splitter, "cdef\n"), (std::vector<std::string>{"abcd", "ef"}));
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.ok()); }
  bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }
  long size_of(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
  }
  testing::TempDir temp_;
  const std::string& dir_ = temp_.path();
};

using RotatingFileTest = TempDirTest;

TEST_F(RotatingFileTest, RotatesBySizeAndKeepsCountFiles) {
  RotatingFile file(dir_ + "/stdout.log", 100, 3);
  std::string record(40, 'r');
  record += '\n';
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(file.append(record).ok());
  EXPECT_TRUE(exists(dir_ + "/stdout.log"));
  EXPECT_TRUE(exists(dir_ + "/stdout.log.1"));
  EXPECT_TRUE(exists(dir_ + "/stdout.log.2"));
  EXPECT_FALSE(exists(dir_ + "/stdout.log.3"));
  EXPECT_LE(size_of(dir_ + "/stdout.log"), 100);
  EXPECT_EQ(size_of(dir_ + "/stdout.log.1"), 82);
  // 10 records of 41 bytes, 2 per file: the live file holds the last 2.
  EXPECT_EQ(size_of(dir_ + "/stdout.log"), 82);
}

// Issue 14: a log file replaced by a link (to a file of the user's) is refused, not followed,
// and rotation renames inside the log directory only.
TEST_F(RotatingFileTest, NeverWritesThroughALink) {
  std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "mine\n";
  ASSERT_EQ(::symlink(victim.c_str(), (dir_ + "/stderr.log").c_str()), 0);
  RotatingFile file(dir_ + "/stderr.log", 100, 3);
  auto written = file.append("attacker-chosen\n");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find(dir_ + "/stderr.log: is a symbolic link"),
            std::string::npos)
      << written.error().message;
  EXPECT_EQ(size_of(victim), 5);
}

// Issue 14: what prepare_block_storage makes of a block's storage before each start.
using BlockStorageTest = TempDirTest;

TEST_F(BlockStorageTest, RuntimeDirsAreMadeAfreshVolumesKeptLinksRefused) {
  SandboxPolicy policy;
  policy.storage_root = dir_ + "/storage";
  policy.host_tmp_dir = policy.storage_root + "/tmp/s-b";
  std::string run = policy.host_tmp_dir + "/run";
  std::string data = policy.storage_root + "/volumes/s/b/data";
  std::string logs = policy.storage_root + "/logs/s-b";
  policy.read_write = {{data, ""}, {run, ""}};
  ASSERT_TRUE(prepare_block_storage(policy, logs).ok());
  for (const auto& path : {policy.host_tmp_dir, run, data, logs}) {
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0) << path;
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << path;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << path;
  }
  std::ofstream(run + "/stale.sock") << "x";
  std::ofstream(data + "/kept") << "x";
  ASSERT_TRUE(prepare_block_storage(policy, logs).ok());
  EXPECT_FALSE(exists(run + "/stale.sock")) << "a runtime dir is scratch: made afresh";
  EXPECT_TRUE(exists(data + "/kept")) << "a volume persists";

  std::string outside = dir_ + "/outside";
  ASSERT_EQ(::mkdir(outside.c_str(), 0700), 0);
  std::ofstream(outside + "/key") << "secret";
  for (const auto& path : {run, data, logs}) {
    std::string aside = path + ".real";
    ASSERT_EQ(::rename(path.c_str(), aside.c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), path.c_str()), 0);
    auto prepared = prepare_block_storage(policy, logs);
    ASSERT_FALSE(prepared.ok()) << path;
    EXPECT_EQ(prepared.error().message.rfind(path + ": is a symbolic link", 0), 0u)
        << prepared.error().message;
    ASSERT_EQ(::unlink(path.c_str()), 0);
    ASSERT_EQ(::rename(aside.c_str(), path.c_str()), 0);
  }
  EXPECT_TRUE(exists(outside + "/key"));
  EXPECT_EQ(size_of(outside + "/key"), 6);
  EXPECT_FALSE(exists(outside + "/stale.sock"));

  // A storage root others may write to is not used at all.
  ASSERT_EQ(::chmod(policy.storage_root.c_str(), 0777), 0);
  auto open_root = prepare_block_storage(policy, logs);
  ASSERT_FALSE(open_root.ok());
  EXPECT_NE(open_root.error().message.find("mode 0777"), std::string::npos);
}

using BlockLogsTest = TempDirTest;

struct RecordingSink : LogSink {
  bool accept = true;
  std::vector<LogLine> lines;
  bool offer(const LogLine& line) override {
    if (!accept) return false;
    lines.push_back(line);
    return true;
  }
};

TEST_F(BlockLogsTest, LinesAreTimestampedInFilesAndRing) {
  auto logs = BlockLogs::open("api", dir_ + "/logs/s-api", LogSettings{});
  ASSERT_TRUE(logs.ok()) << logs.error().message;
  (*logs)->feed(LogStream::out, "one\ntwo\n");
  (*logs)->feed(LogStream::err, "bad\n");
  auto tail = (*logs)->tail(10);
  ASSERT_EQ(tail.size(), 3u);
  EXPECT_EQ(tail[0].text, "one");
  EXPECT_EQ(tail[2].stream, LogStream::err);
  EXPECT_LT(tail[0].seq, tail[1].seq);
  std::ifstream out(dir_ + "/logs/s-api/stdout.log");
  std::string first;
  std::getline(out, first);
  // "2026-12-01T21:35:00.123Z one"
  ASSERT_EQ(first.size(), 24u + 1 + 3) << first;
  EXPECT_EQ(first.substr(25), "one");
  EXPECT_EQ(first[10], 'T');
  EXPECT_EQ(first[23], 'Z');
  std::ifstream err(dir_ + "/logs/s-api/stderr.log");
  std::string err_line;
  std::getline(err, err_line);
  EXPECT_EQ(err_line.substr(25), "bad");
}

TEST_F(BlockLogsTest, RingIsBoundedByLinesAndBytes) {
  LogSettings settings;
  settings.ring_lines = 5;
  settings.ring_bytes = 1000;
  auto logs = BlockLogs::open("api", "", settings);
  ASSERT_TRUE(logs.ok());
  for (int i = 0; i < 20; ++i) (*logs)->feed(LogStream::out, "line " + std::to_string(i) + "\n");
  auto tail = (*logs)->tail(100);
  ASSERT_EQ(tail.size(), 5u);
  EXPECT_EQ(tail.front().text, "line 15");
  EXPECT_EQ(tail.back().text, "line 19");
  (*logs)->feed(LogStream::out, std::string(900, 'b') + "\n" + std::string(900, 'c') + "\n");
  tail = (*logs)->tail(100);
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].text[0], 'c');
}

TEST_F(BlockLogsTest, SlowFollowerSkipsWithAMarkerOthersGetEverything) {
  auto logs = BlockLogs::open("api", "", LogSettings{});
  ASSERT_TRUE(logs.ok());
  RecordingSink slow, fast;
  (*logs)->follow(&slow);
  (*logs)->follow(&fast);
  (*logs)->feed(LogStream::out, "a\n");
  slow.accept = false;
  (*logs)->feed(LogStream::out, "b\nc\nd\n");
  slow.accept = true;
  (*logs)->feed(LogStream::out, "e\n");
  ASSERT_EQ(fast.lines.size(), 5u);
  ASSERT_EQ(slow.lines.size(), 3u);
  EXPECT_EQ(slow.lines[0].text, "a");
  EXPECT_EQ(slow.lines[1].stream, LogStream::daemon);
  EXPECT_NE(slow.lines[1].text.find("3 lines skipped"), std::string::npos) << slow.lines[1].text;
  EXPECT_EQ(slow.lines[2].text, "e");
}

TEST(InitScript, GuardsRunAndAppendAreQuoted) {
  InitStep run;
  run.run = {"initdb", "-D", "/data/it's here"};
  InitStep append;
  append.append_path = "/data/conf";
  append.append_text = "listen = '*'\n";
  InitStep guard;
  guard.if_not_exists = "/data/PG_VERSION";
  guard.then = {run, append};
  std::string script = init_script({guard});
  EXPECT_NE(script.find("set -e\n"), std::string::npos);
  EXPECT_NE(script.find("if [ ! -e '/data/PG_VERSION' ]; then"), std::string::npos) << script;
  EXPECT_NE(script.find("'initdb' '-D' '/data/it'\\''s here'"), std::string::npos) << script;
  EXPECT_NE(script.find(">> '/data/conf'"), std::string::npos) << script;
  EXPECT_TRUE(init_script({}).empty());
  EXPECT_EQ(init_argv({guard}).at(0), "/bin/sh");
}

TEST(InitScript, TheScriptRunsInSh) {
  testing::TempDir temp;
  const std::string& templ = temp.path();
  InitStep append;
  append.append_path = templ + "/conf";
  append.append_text = "a 'quoted' $HOME line\n";
  InitStep guard;
  guard.if_not_exists = templ + "/conf";
  guard.then = {append};
  std::string script = init_script({guard});
  std::string cmd = "/bin/sh -c " + shell_quote(script) + " >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_EQ(std::system(cmd.c_str()), 0);  // the guard holds: appended once
  std::ifstream in(templ + "/conf");
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "a 'quoted' $HOME line\n");
}

}  // namespace
}  // namespace stackie
