// Pure pieces of the supervisor: the state table, the restart policy and backoff, line
// splitting, rotation, the ring and followers, the init script.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "supervisor/append_buffer.h"
#include "supervisor/block_logs.h"
#include "supervisor/block_state.h"
#include "supervisor/block_storage.h"
#include "supervisor/daemon_handlers.h"
#include "supervisor/event_bus.h"
#include "supervisor/exit_description.h"
#include "supervisor/heap_trim.h"
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

// A batch of lines is one `lines` event, written by hand like a single line: the same text as
// the Json, and it reads back as exactly the lines, in order, with their levels (every level:
// what comes before a line's text is written from a table by level, issue 25).
TEST(LogLinesEvent, TheWriterMatchesTheJsonAndDecodesToTheLines) {
  const std::string nasty = std::string("quote \" back \\ tab \t nul ") + '\0' + " bad \xff\xfe" +
                            " \xe2\x82\xac ctl \x01\x1f end";
  std::vector<std::string> texts = {"", "LOG:  ready", nasty, "plain", "\"", std::string(40, 'x')};
  std::vector<LogBatchLine> lines;
  for (size_t i = 0; i < texts.size(); ++i)
    lines.push_back({i + 1, static_cast<LogLevel>(i % 6), texts[i]});
  for (size_t count : {size_t(0), size_t(1), lines.size()}) {
    std::span<const LogBatchLine> some(lines.data(), count);
    std::string written;
    write_log_lines_event(written, "sh\"op", "d\x01b", LogStream::err, "2026-12-03T00:00:00.123Z",
                          some);
    Json built =
        log_lines_event("sh\"op", "d\x01b", LogStream::err, "2026-12-03T00:00:00.123Z", some);
    EXPECT_EQ(written, to_json(built));
    auto back = parse_json(written);
    ASSERT_TRUE(back.ok()) << written;
    EXPECT_EQ((*back)["stream"].string_or(""), "stderr");
    EXPECT_EQ((*back)["ts"].string_or(""), "2026-12-03T00:00:00.123Z");
    ASSERT_TRUE((*back)["lines"].is_array());
    ASSERT_EQ((*back)["lines"].size(), count);
    for (size_t i = 0; i < count; ++i) {
      const Json& line = (*back)["lines"].as_array()[i];
      // As a single `line` event would carry the same line.
      LogLine single{lines[i].seq, 0, LogStream::err, lines[i].level, texts[i]};
      Json alone = log_line_event("s", "b", single, "t");
      EXPECT_EQ(to_json(line["text"]), to_json(alone["text"]));
      EXPECT_EQ(to_json(line["level"]), to_json(alone["level"]));
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

// The daemon lets go of a rotated-out file off its loop (its pages are freed at the last
// close): rotation hands it over open, its name already gone, the rotation otherwise the same.
TEST_F(RotatingFileTest, ARotatedOutFileIsHandedOverOpenWithItsNameGone) {
  std::vector<UniqueFd> released;
  std::vector<nlink_t> links_when_released;
  RotatingFile file(dir_ + "/stdout.log", 100, 3);
  file.release_rotated_out_with([&](UniqueFd fd) {
    struct stat st {};
    links_when_released.push_back(::fstat(fd.get(), &st) == 0 ? st.st_nlink : 99);
    released.push_back(std::move(fd));
  });
  for (int i = 0; i < 10; ++i) {
    std::string record = "record " + std::to_string(i) + std::string(32, 'r') + "\n";
    ASSERT_TRUE(file.append(record).ok());
  }
  // 10 records of 41 bytes, 2 a file, 3 files kept: records 0-3 left in two files.
  ASSERT_EQ(released.size(), 2u);
  for (size_t k = 0; k < released.size(); ++k) {
    char text[200] = {};
    ASSERT_GT(::pread(released[k].get(), text, sizeof text - 1, 0), 0);
    EXPECT_EQ(std::string(text).substr(0, 8), "record " + std::to_string(2 * k)) << text;
    EXPECT_EQ(links_when_released[k], 0u) << "handed over with a name left";
  }
  EXPECT_FALSE(exists(dir_ + "/stdout.log.3"));
  EXPECT_EQ(size_of(dir_ + "/stdout.log.2"), 82);
  std::ifstream kept(dir_ + "/stdout.log.2");
  std::string first;
  std::getline(kept, first);
  EXPECT_EQ(first.substr(0, 8), "record 4");
}

// Issue 14: a link planted as the oldest file is not opened for the release: the hook never
// holds the file it points to, which stays as it was, and the rotation goes on.
TEST_F(RotatingFileTest, ALinkPlantedAsTheOldestFileIsNotHandedOver) {
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "mine\n";
  ASSERT_EQ(::symlink(victim.c_str(), (dir_ + "/stdout.log.2").c_str()), 0);
  std::vector<UniqueFd> released;
  RotatingFile file(dir_ + "/stdout.log", 100, 3);
  file.release_rotated_out_with([&](UniqueFd fd) { released.push_back(std::move(fd)); });
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(file.append(std::string(40, 'r') + "\n").ok());
  struct stat victim_st {};
  ASSERT_EQ(::stat(victim.c_str(), &victim_st), 0);
  for (const UniqueFd& fd : released) {
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_FALSE(st.st_ino == victim_st.st_ino && st.st_dev == victim_st.st_dev)
        << "the release was handed the link's target";
  }
  EXPECT_EQ(size_of(victim), 5);
  struct stat oldest {};
  ASSERT_EQ(::lstat((dir_ + "/stdout.log.2").c_str(), &oldest), 0);
  EXPECT_TRUE(S_ISREG(oldest.st_mode)) << "the link was not rotated away";
}

// logs.max_files lowered since: the files past the new count are older than every file kept,
// and a follower that reads every file left would read them as new. They go at the first
// write.
TEST_F(RotatingFileTest, FilesOfALargerCountKeptBeforeAreRemoved) {
  for (int k = 1; k <= 5; ++k) std::ofstream(dir_ + "/stdout.log." + std::to_string(k)) << "old\n";
  std::ofstream(dir_ + "/stdout.log.7") << "after a gap: not of the chain\n";
  RotatingFile file(dir_ + "/stdout.log", 100, 3);
  ASSERT_TRUE(file.append("new\n").ok());
  EXPECT_TRUE(exists(dir_ + "/stdout.log"));
  EXPECT_TRUE(exists(dir_ + "/stdout.log.1"));
  EXPECT_TRUE(exists(dir_ + "/stdout.log.2"));
  for (int k = 3; k <= 5; ++k) EXPECT_FALSE(exists(dir_ + "/stdout.log." + std::to_string(k))) << k;
  EXPECT_TRUE(exists(dir_ + "/stdout.log.7"));
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

// stdout.log cannot be written (a directory in its place): stderr.log taking its records must
// not make `status` say the logs are written again, nor say the error anew each time (it did:
// the error stood for the last file written, whichever it was).
TEST_F(BlockLogsTest, AFileThatKeepsFailingStaysSaidOnceWhileTheOtherWorks) {
  const std::string logs_dir = dir_ + "/logs/s-api";
  auto opened = BlockLogs::open("api", logs_dir, LogSettings{});
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto logs = *opened;
  auto records = [&](const std::string& name) {
    std::ifstream in(logs_dir + "/" + name);
    std::vector<std::string> texts;
    for (std::string record; std::getline(in, record);)
      texts.push_back(record.size() > 25 ? record.substr(25) : "");
    return texts;
  };
  ASSERT_EQ(::mkdir((logs_dir + "/stdout.log").c_str(), 0700), 0);
  for (int i = 0; i < 3; ++i) {
    logs->feed(LogStream::out, "lost\n");
    EXPECT_NE(logs->write_error(), "") << "after stdout " << i;
    logs->feed(LogStream::err, "kept\n");
    EXPECT_NE(logs->write_error(), "") << "after stderr " << i;
  }
  EXPECT_EQ(logs->write_errors(), 3u);
  size_t said = 0;
  for (const auto& line : logs->tail(100))
    if (line.text.starts_with("[stackie] log file not written: ")) ++said;
  EXPECT_EQ(said, 1u);
  EXPECT_EQ(records("stderr.log").size(), 4u) << "three lines and the error";

  ASSERT_EQ(::rmdir((logs_dir + "/stdout.log").c_str()), 0);
  logs->feed(LogStream::out, "written\n");
  EXPECT_EQ(logs->write_error(), "");
  EXPECT_EQ(records("stdout.log"), std::vector<std::string>{"written"});
}

// Every block of a thread handles its reads in the same buffers (the cache, issue 25): what
// one block has not written yet (its note that a file failed) stays its own, goes to its
// stderr.log before its next lines there, and never into another block's files.
TEST_F(BlockLogsTest, BlocksShareTheReadBuffersButNotWhatTheyHaveNotWritten) {
  auto records = [&](const std::string& block, const std::string& name) {
    std::ifstream in(dir_ + "/logs/" + block + "/" + name);
    std::vector<std::string> texts;
    for (std::string record; std::getline(in, record);)
      texts.push_back(record.size() > 25 ? record.substr(25) : "");
    return texts;
  };
  auto a = BlockLogs::open("a", dir_ + "/logs/s-a", LogSettings{});
  auto b = BlockLogs::open("b", dir_ + "/logs/s-b", LogSettings{});
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string a_err = dir_ + "/logs/s-a/stderr.log";
  ASSERT_EQ(::mkdir(a_err.c_str(), 0700), 0);
  (*a)->feed(LogStream::err, "a lost\n");  // its note, that stderr.log failed, waits
  ASSERT_EQ(::rmdir(a_err.c_str()), 0);
  (*b)->feed(LogStream::out, "b out\n");
  (*b)->feed(LogStream::err, "b err\n");
  (*a)->feed(LogStream::out, "a out\n");  // a read of stdout writes the note to stderr.log
  (*a)->feed(LogStream::err, "a err\n");
  EXPECT_EQ(records("s-b", "stdout.log"), std::vector<std::string>{"b out"});
  EXPECT_EQ(records("s-b", "stderr.log"), std::vector<std::string>{"b err"});
  EXPECT_EQ(records("s-a", "stdout.log"), std::vector<std::string>{"a out"});
  const auto a_errors = records("s-a", "stderr.log");
  ASSERT_EQ(a_errors.size(), 2u);
  EXPECT_TRUE(a_errors[0].starts_with("[stackie] log file not written: ")) << a_errors[0];
  EXPECT_EQ(a_errors[1], "a err");

  // Failing again, its note waits for a read of stderr this time: it comes before that read's
  // lines, and nothing of it lands in the other block's stderr.log.
  ASSERT_EQ(::unlink(a_err.c_str()), 0);
  ASSERT_EQ(::mkdir(a_err.c_str(), 0700), 0);
  (*a)->feed(LogStream::err, "a lost again\n");
  ASSERT_EQ(::rmdir(a_err.c_str()), 0);
  (*b)->feed(LogStream::err, "b err 2\n");
  (*a)->feed(LogStream::err, "a err 2\n");
  EXPECT_EQ(records("s-b", "stderr.log"), (std::vector<std::string>{"b err", "b err 2"}));
  const auto a_again = records("s-a", "stderr.log");
  ASSERT_EQ(a_again.size(), 2u);
  EXPECT_TRUE(a_again[0].starts_with("[stackie] log file not written: ")) << a_again[0];
  EXPECT_EQ(a_again[1], "a err 2");
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

// The ring takes a read's lines at once and copies only those that can stay (issue 25): a read
// with more lines than the ring keeps leaves its last ones, a line put together across reads
// among them, exactly as if each had been pushed.
TEST_F(BlockLogsTest, AReadOfMoreLinesThanTheRingKeepsLeavesItsLastOnes) {
  LogSettings settings;
  settings.ring_lines = 5;
  auto logs = BlockLogs::open("api", "", settings);
  ASSERT_TRUE(logs.ok());
  (*logs)->feed(LogStream::out, "a\nb\nc\nhead");
  (*logs)->feed(LogStream::out, "er\nl1\nl2\nl3\n");
  std::vector<std::string> texts;
  for (const LogLine& line : (*logs)->tail(100)) texts.push_back(line.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"c", "header", "l1", "l2", "l3"}));
  std::string flood = "ing\n";  // ends a line begun in the read before
  for (int i = 0; i < 30; ++i) flood += "flood " + std::to_string(i) + "\n";
  (*logs)->feed(LogStream::err, "the last one of the read before is miss");
  (*logs)->feed(LogStream::err, flood);
  texts.clear();
  for (const LogLine& line : (*logs)->tail(100)) texts.push_back(line.text);
  EXPECT_EQ(texts,
            (std::vector<std::string>{"flood 25", "flood 26", "flood 27", "flood 28", "flood 29"}));
  settings.ring_lines = 40;
  logs = BlockLogs::open("api", "", settings);
  ASSERT_TRUE(logs.ok());
  (*logs)->feed(LogStream::err, "the last one of the read before is miss");
  (*logs)->feed(LogStream::err, flood);
  auto tail = (*logs)->tail(100);
  ASSERT_EQ(tail.size(), 31u);
  EXPECT_EQ(tail.front().text, "the last one of the read before is missing");
  EXPECT_EQ(tail.front().stream, LogStream::err);
  EXPECT_EQ(tail.back().text, "flood 29");
  // With no follower the ring takes a long read in pieces of 4096 lines: the pieces of an
  // overlong line, copied by the splitter, keep their texts across that cut.
  settings.max_line = 100;
  logs = BlockLogs::open("api", "", settings);
  ASSERT_TRUE(logs.ok());
  std::string lines;
  for (int i = 0; i < 4096; ++i) lines += "l\n";
  const std::string overlong = std::string(100, 'a') + std::string(100, 'b') + "cc";
  (*logs)->feed(LogStream::out, lines + overlong + "\n");
  tail = (*logs)->tail(4);
  ASSERT_EQ(tail.size(), 4u);
  EXPECT_EQ(tail[0].text, "l");
  EXPECT_EQ(tail[1].text, std::string(100, 'a'));
  EXPECT_EQ(tail[2].text, std::string(100, 'b'));
  EXPECT_EQ(tail[3].text, "cc");
}

// The text of line `seq` in the ring tests: lengths from 0 to 96, so lines wrap the byte
// buffer at every offset.
std::string ring_text(uint64_t seq) {
  return std::string(seq * 7 % 97, static_cast<char>('a' + seq % 26));
}

// Records written in place across many growths come out whole and in order; clear() keeps
// the memory, a swap with an empty buffer gives it back.
TEST(AppendBuffer, KeepsEveryByteAcrossGrowth) {
  AppendBuffer buffer;
  std::string expected;
  for (int i = 0; i < 5000; ++i) {
    std::string record = "record " + std::to_string(i) + (i % 7 == 0 ? "" : " with more") + "\n";
    if (i % 2 == 0) {
      char* at = buffer.extend(record.size());
      std::memcpy(at, record.data(), record.size());
    } else {
      buffer.append(std::string_view(record).substr(0, record.size() - 1));
      buffer.append('\n');
    }
    buffer.append(std::string_view());
    expected += record;
  }
  EXPECT_EQ(buffer.view(), expected);
  EXPECT_EQ(buffer.size(), expected.size());
  EXPECT_GE(buffer.capacity(), expected.size());
  const size_t capacity = buffer.capacity();
  buffer.clear();
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.capacity(), capacity);
  buffer.append("again");
  EXPECT_EQ(buffer.view(), "again");
  AppendBuffer().swap(buffer);
  EXPECT_EQ(buffer.capacity(), 0u);
  EXPECT_EQ(buffer.view(), "");
}

TEST(LineRing, TailAfterManyWrapsIsTheLastLinesIntact) {
  LineRing ring(100, 4096);
  for (uint64_t seq = 1; seq <= 5000; ++seq)
    ring.push(seq, static_cast<int64_t>(seq), seq % 2 ? LogStream::out : LogStream::err,
              LogLevel::info, ring_text(seq));
  auto tail = ring.tail(1000);
  ASSERT_FALSE(tail.empty());
  ASSERT_LE(tail.size(), 100u);
  // Lines average 48 bytes: the byte budget, not the line count, is what bounds them here,
  // and at most one line's worth (the end of a lap) is lost to the wrap.
  EXPECT_GE(tail.size(), (4096u - 96) / 96);
  size_t bytes = 0;
  for (size_t i = 0; i < tail.size(); ++i) {
    uint64_t seq = 5000 - (tail.size() - 1 - i);
    EXPECT_EQ(tail[i].seq, seq);
    EXPECT_EQ(tail[i].time_ms, static_cast<int64_t>(seq));
    EXPECT_EQ(tail[i].stream, seq % 2 ? LogStream::out : LogStream::err);
    EXPECT_EQ(tail[i].text, ring_text(seq)) << "seq " << seq;
    bytes += tail[i].text.size();
  }
  EXPECT_LE(bytes, 4096u);
  auto last3 = ring.tail(3);
  ASSERT_EQ(last3.size(), 3u);
  EXPECT_EQ(last3[2].seq, 5000u);
}

// The byte buffer starts small and grows only when lines would otherwise leave for want of
// bytes; what it holds survives each growth, in order.
// A block that says little (the daemon's notes about it, a line or two of its own) holds a
// small buffer, not the start size of a talkative one: 500 such blocks are in one daemon
// (bench/scale).
TEST(LineRing, AQuietBlockHoldsASmallBuffer) {
  LineRing ring(2000, 1 << 20);
  EXPECT_EQ(ring.buffer_bytes(), 0u) << "nothing before the first line";
  for (const char* note :
       {"[stackie] starting", "[stackie] running (pid 4242)", "listening on 127.0.0.1:30000"})
    ring.push(ring.size() + 1, 0, LogStream::daemon, LogLevel::unknown, note);
  EXPECT_LE(ring.buffer_bytes(), 512u);
  EXPECT_EQ(ring.tail(3).back().text, "listening on 127.0.0.1:30000");
}

TEST(LineRing, GrowsItsBufferKeepingItsLines) {
  LineRing ring(100000, 1 << 20);
  for (uint64_t seq = 1; seq <= 20000; ++seq)
    ring.push(seq, 0, LogStream::out, LogLevel::unknown, ring_text(seq));
  auto tail = ring.tail(100000);
  // 20000 lines of 48 bytes on average (960 KB) do not all fit in 1 MiB with the lap's waste,
  // but most do, and the last line is always there.
  ASSERT_GE(tail.size(), 15000u);
  for (size_t i = 0; i < tail.size(); ++i) {
    uint64_t seq = 20000 - (tail.size() - 1 - i);
    ASSERT_EQ(tail[i].seq, seq);
    ASSERT_EQ(tail[i].text, ring_text(seq)) << "seq " << seq;
  }
}

TEST(LineRing, BoundedByLinesWhenTheyAreShort) {
  LineRing ring(10, 1 << 20);
  for (uint64_t seq = 1; seq <= 25; ++seq)
    ring.push(seq, 0, LogStream::out, LogLevel::unknown, "x" + std::to_string(seq));
  auto tail = ring.tail(100);
  ASSERT_EQ(tail.size(), 10u);
  EXPECT_EQ(tail.front().text, "x16");
  EXPECT_EQ(tail.back().text, "x25");
}

// An entry keeps its stream and level in a byte each (issue 25): every value comes back, also
// after the index grew and wrapped.
TEST(LineRing, KeepsEachLinesTimeStreamAndLevel) {
  LineRing ring(7, 1 << 20);
  const LogStream streams[] = {LogStream::out, LogStream::err, LogStream::daemon};
  const LogLevel levels[] = {LogLevel::unknown, LogLevel::debug, LogLevel::info,
                             LogLevel::warn,    LogLevel::error, LogLevel::fatal};
  for (uint64_t seq = 1; seq <= 20; ++seq)
    ring.push(seq, int64_t(seq) * 1000 - 5, streams[seq % 3], levels[seq % 6],
              "line " + std::to_string(seq));
  auto tail = ring.tail(7);
  ASSERT_EQ(tail.size(), 7u);
  for (const LogLine& line : tail) {
    EXPECT_EQ(line.time_ms, int64_t(line.seq) * 1000 - 5);
    EXPECT_EQ(line.stream, streams[line.seq % 3]) << line.seq;
    EXPECT_EQ(line.level, levels[line.seq % 6]) << line.seq;
    EXPECT_EQ(line.text, "line " + std::to_string(line.seq));
  }
}

// push_lines is a shortcut for pushing each line in turn (issue 25): whatever the ring's bounds,
// the lines' sizes (empty ones, ones that lap the buffer, make it grow or are larger than the
// whole budget) and how they are cut into batches, the ring ends the same, line for line and
// byte for byte, buffer size included. Batches longer than the line count leave their first
// lines uncopied.
TEST(LineRing, PushingLinesInBatchesEndsAsPushingEachLine) {
  std::mt19937_64 random(25);
  const LogStream streams[] = {LogStream::out, LogStream::err};
  for (int round = 0; round < 300; ++round) {
    const size_t max_lines = 1 + random() % 40;
    const size_t max_bytes = random() % 4 == 0 ? 0 : 64 + random() % 4000;
    LineRing each(max_lines, max_bytes), batched(max_lines, max_bytes);
    std::vector<std::string> texts;  // kept alive while the batch is pushed
    std::vector<LogBatchLine> batch;
    uint64_t seq = 1;
    for (int push = 0; push < 40; ++push) {
      const size_t lines = random() % (3 * max_lines + 2);
      const int64_t time_ms = push * 1000;
      const LogStream stream = streams[push % 2];
      texts.clear();
      batch.clear();
      for (size_t i = 0; i < lines; ++i) {
        const size_t kind = random() % 20;
        const size_t size = kind == 0   ? 0
                            : kind == 1 ? max_bytes + 1 + random() % 10
                            : kind == 2 ? max_bytes / 2 + random() % (max_bytes / 2 + 1)
                                        : random() % 120;
        // Each text names its line, so that a text copied to the wrong place shows.
        std::string text(size, static_cast<char>('a' + (seq + i) % 26));
        const std::string number = std::to_string(seq + i);
        text.replace(0, std::min(size, number.size()), number.substr(0, size));
        texts.push_back(std::move(text));
      }
      for (size_t i = 0; i < lines; ++i) {
        const auto level = static_cast<LogLevel>(seq % 6);
        batch.push_back({seq, level, texts[i]});
        each.push(seq, time_ms, stream, level, texts[i]);
        ++seq;
      }
      batched.push_lines(time_ms, stream, batch);
      ASSERT_EQ(batched.size(), each.size()) << round << " " << push;
      ASSERT_EQ(batched.buffer_bytes(), each.buffer_bytes()) << round << " " << push;
      const auto want = each.tail(max_lines), got = batched.tail(max_lines);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i].seq, want[i].seq) << round << " " << push;
        ASSERT_EQ(got[i].time_ms, want[i].time_ms);
        ASSERT_EQ(got[i].stream, want[i].stream);
        ASSERT_EQ(got[i].level, want[i].level);
        ASSERT_EQ(got[i].text, want[i].text) << round << " " << push << " seq " << got[i].seq;
      }
    }
  }
}

TEST(LineRing, ALineLargerThanTheBudgetEmptiesIt) {
  LineRing ring(10, 100);
  ring.push(1, 0, LogStream::out, LogLevel::unknown, "kept");
  ring.push(2, 0, LogStream::out, LogLevel::unknown, std::string(101, 'z'));
  EXPECT_EQ(ring.size(), 0u);
  ring.push(3, 0, LogStream::out, LogLevel::unknown, "");
  ring.push(4, 0, LogStream::out, LogLevel::unknown, std::string(100, 'y'));
  auto tail = ring.tail(10);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0].text, "");
  EXPECT_EQ(tail[1].text, std::string(100, 'y'));
}

TEST_F(BlockLogsTest, HugeLinesAreSplitInFilesAndRing) {
  LogSettings settings;
  settings.max_line = 1000;
  auto logs = BlockLogs::open("api", dir_ + "/logs/s-api", settings);
  ASSERT_TRUE(logs.ok()) << logs.error().message;
  std::string huge(2500, 'h');
  // In three reads, cut in the middle of the line.
  (*logs)->feed(LogStream::out, std::string_view(huge).substr(0, 700));
  (*logs)->feed(LogStream::out, std::string_view(huge).substr(700));
  (*logs)->feed(LogStream::out, "\nshort\n");
  auto tail = (*logs)->tail(10);
  ASSERT_EQ(tail.size(), 4u);
  EXPECT_EQ(tail[0].text.size(), 1000u);
  EXPECT_EQ(tail[1].text.size(), 1000u);
  EXPECT_EQ(tail[2].text.size(), 500u);
  EXPECT_EQ(tail[3].text, "short");
  std::ifstream out(dir_ + "/logs/s-api/stdout.log");
  std::vector<std::string> records;
  for (std::string record; std::getline(out, record);) records.push_back(record);
  ASSERT_EQ(records.size(), 4u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i][23], 'Z');
    EXPECT_EQ(records[i].substr(25), tail[i].text);
  }
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

// A sink that takes batches whole or not at all, as the daemon's `logs -f` follower does.
struct BatchSink : LogSink {
  bool accept = true;
  std::vector<std::vector<std::string>> batches;
  std::vector<LogLine> singles;
  bool offer(const LogLine& line) override {
    if (!accept) return false;
    singles.push_back(line);
    return true;
  }
  size_t offer_batch(const LogBatch& batch) override {
    if (!accept) return batch.lines.size();
    auto& got = batches.emplace_back();
    for (const auto& line : batch.lines) got.emplace_back(line.text);
    return 0;
  }
};

TEST_F(BlockLogsTest, AFollowerGetsOneBatchPerReadWithExactlyItsLines) {
  LogSettings settings;
  settings.max_line = 8;
  auto logs = BlockLogs::open("api", "", settings);
  ASSERT_TRUE(logs.ok());
  BatchSink sink;
  (*logs)->follow(&sink);
  (*logs)->feed(LogStream::out, "one\ntwo\nthr");
  (*logs)->feed(LogStream::out, "ee\n0123456789\n");
  (*logs)->feed(LogStream::out, "no end");
  (*logs)->end_of_stream(LogStream::out);
  using Lines = std::vector<std::string>;
  ASSERT_EQ(sink.batches.size(), 3u);
  EXPECT_EQ(sink.batches[0], (Lines{"one", "two"}));
  EXPECT_EQ(sink.batches[1], (Lines{"three", "01234567", "89"}));
  EXPECT_EQ(sink.batches[2], (Lines{"no end"}));
  EXPECT_TRUE(sink.singles.empty());
}

// Lines whole within a read reach a follower as views of that read, not copies (issue 25: the
// copy per line was most of what a follower, even a stuck one, cost); lines put together across
// reads or cut from an overlong one are copied, and both kinds keep their order in the batch.
TEST_F(BlockLogsTest, AFollowerSeesTheReadsOwnBytesAndCopiesOnlyAssembledLines) {
  LogSettings settings;
  settings.max_line = 4;
  auto logs = BlockLogs::open("api", "", settings);
  ASSERT_TRUE(logs.ok());
  struct ViewSink : LogSink {
    std::string_view read;
    std::vector<std::pair<std::string, bool>> lines;  // text, a view of `read`
    bool offer(const LogLine&) override { return true; }
    size_t offer_batch(const LogBatch& batch) override {
      for (const auto& line : batch.lines) {
        const std::less<const char*> before;
        bool inside = !line.text.empty() && !before(line.text.data(), read.data()) &&
                      !before(read.data() + read.size(), line.text.data() + line.text.size());
        lines.emplace_back(std::string(line.text), inside);
      }
      return 0;
    }
  } sink;
  (*logs)->follow(&sink);
  const std::string first = "ab\nlonger\ncd\nxyz", second = "w\nok\n";
  sink.read = first;
  (*logs)->feed(LogStream::out, first);
  sink.read = second;
  (*logs)->feed(LogStream::out, second);
  using Seen = std::vector<std::pair<std::string, bool>>;
  EXPECT_EQ(sink.lines, (Seen{{"ab", true},
                              {"long", false},
                              {"er", false},
                              {"cd", true},
                              {"xyzw", false},
                              {"ok", true}}));
}

// A flood's reads grow the buffers of reads, which every block of the thread shares: another
// block's quiet line between two reads of the flood leaves them be, a run of quiet reads gives
// them back, and the lines of all reach the files and the follower whole.
TEST_F(BlockLogsTest, BuffersAFloodGrewAreGivenBackOnceReadsAreQuiet) {
  auto logs = BlockLogs::open("api", dir_ + "/logs/s-api", LogSettings{});
  auto other = BlockLogs::open("web", dir_ + "/logs/s-web", LogSettings{});
  ASSERT_TRUE(logs.ok() && other.ok());
  BatchSink follower;
  (*logs)->follow(&follower);
  std::string flood;
  while (flood.size() < 256 * 1024) flood += "a line of a flood, long enough to count\n";
  (*logs)->feed(LogStream::out, flood);
  const size_t after_flood = BlockLogs::read_scratch_bytes();
  EXPECT_GT(after_flood, 256u * 1024);
  (*other)->feed(LogStream::out, "a quiet line of another block\n");
  EXPECT_EQ(BlockLogs::read_scratch_bytes(), after_flood) << "given back amid a flood";
  for (unsigned i = 0; i < BlockLogs::kSmallReadsBeforeRelease - 1; ++i)
    (*logs)->feed(LogStream::out, "quiet\n");
  EXPECT_LT(BlockLogs::read_scratch_bytes(), 64u * 1024) << "after the flood: " << after_flood;
  EXPECT_LT((*logs)->batch_buffer_bytes(), 64u * 1024);
  ASSERT_EQ(follower.batches.size(), size_t{BlockLogs::kSmallReadsBeforeRelease});
  EXPECT_EQ(follower.batches.back(), (std::vector<std::string>{"quiet"}));
  EXPECT_EQ((*logs)->tail(1).at(0).text, "quiet");
  std::ifstream out(dir_ + "/logs/s-api/stdout.log");
  size_t records = 0;
  for (std::string record; std::getline(out, record);) ++records;
  EXPECT_EQ(records, flood.size() / 40 + BlockLogs::kSmallReadsBeforeRelease - 1);
}

// A follower that stops taking lines costs one refused offer per read, never blocks the
// block's logs, and is told how many lines it missed before the next batch it takes.
TEST_F(BlockLogsTest, AStuckBatchFollowerMissesLinesButNeverHoldsTheBlock) {
  auto logs = BlockLogs::open("api", dir_ + "/logs/s-api", LogSettings{});
  ASSERT_TRUE(logs.ok());
  BatchSink stuck, fast;
  (*logs)->follow(&stuck);
  (*logs)->follow(&fast);
  stuck.accept = false;
  std::string read;
  for (int i = 0; i < 1000; ++i) read += "line " + std::to_string(i) + "\n";
  for (int r = 0; r < 50; ++r) (*logs)->feed(LogStream::out, read);
  EXPECT_EQ(fast.batches.size(), 50u);
  EXPECT_TRUE(stuck.batches.empty());
  EXPECT_EQ((*logs)->tail(1).at(0).text, "line 999");
  stuck.accept = true;
  (*logs)->feed(LogStream::out, "after\n");
  ASSERT_EQ(stuck.singles.size(), 1u);
  EXPECT_NE(stuck.singles[0].text.find("50000 lines skipped"), std::string::npos)
      << stuck.singles[0].text;
  ASSERT_EQ(stuck.batches.size(), 1u);
  EXPECT_EQ(stuck.batches[0], (std::vector<std::string>{"after"}));
  // Every line reached the file all the same.
  std::ifstream out(dir_ + "/logs/s-api/stdout.log");
  size_t records = 0;
  for (std::string record; std::getline(out, record);) ++records;
  EXPECT_EQ(records, 50001u);
}

// A follower that cannot take lines now (the daemon's, when its client's queue is full) is
// never offered them: it is told per read how many of each level it missed, and counts those
// it wanted as skipped; the marker it gets later says as many as if it had refused the lines.
// While no follower takes lines, none are gathered for followers, and the others' batches and
// the ring are what they were.
TEST_F(BlockLogsTest, AFollowerNotTakingLinesIsToldWhatItMissedLevelByLevel) {
  auto logs = BlockLogs::open("api", "", LogSettings{});
  ASSERT_TRUE(logs.ok());
  // Takes batches, or not at all; wants only warn and worse, as `logs -f --level warn` does.
  struct WarnSink : BatchSink {
    bool taking = true;
    size_t offered = 0;
    std::vector<LevelCounts> missed_reads;
    bool taking_lines() const override { return taking; }
    size_t offer_batch(const LogBatch& batch) override {
      ++offered;
      return BatchSink::offer_batch(batch);
    }
    size_t missed(LogStream stream, const LevelCounts& per_level) override {
      EXPECT_EQ(stream, LogStream::out);
      missed_reads.push_back(per_level);
      return per_level[size_t(LogLevel::warn)] + per_level[size_t(LogLevel::error)] +
             per_level[size_t(LogLevel::fatal)];
    }
  } stuck;
  BatchSink fast;
  (*logs)->follow(&stuck);
  (*logs)->follow(&fast);
  stuck.taking = stuck.accept = false;  // as the daemon's: its marker would be refused too
  const std::string read = "INFO up\nWARNING: disk\nplain\nERROR boom\nWARN again\n";
  (*logs)->feed(LogStream::out, read);
  (*logs)->feed(LogStream::out, "no line yet");  // no whole line: nothing to tell
  (*logs)->feed(LogStream::out, "\n");
  EXPECT_EQ(stuck.offered, 0u);
  // The third read's one line went with the refused marker (below), not through missed().
  ASSERT_EQ(stuck.missed_reads.size(), 1u);
  LevelCounts first{};
  first[size_t(LogLevel::unknown)] = 1;
  first[size_t(LogLevel::info)] = 1;
  first[size_t(LogLevel::warn)] = 2;
  first[size_t(LogLevel::error)] = 1;
  EXPECT_EQ(stuck.missed_reads[0], first);
  ASSERT_EQ(fast.batches.size(), 2u);
  EXPECT_EQ(fast.batches[0], (std::vector<std::string>{"INFO up", "WARNING: disk", "plain",
                                                       "ERROR boom", "WARN again"}));
  stuck.taking = stuck.accept = true;
  (*logs)->feed(LogStream::out, "back\n");
  ASSERT_EQ(stuck.singles.size(), 1u);
  // The 3 lines of warn and worse; then, as for any follower whose marker was refused, every
  // line of that read (1).
  EXPECT_NE(stuck.singles[0].text.find("4 lines skipped"), std::string::npos)
      << stuck.singles[0].text;
  EXPECT_EQ(stuck.singles[0].seq, 7u);  // the first line of the read it precedes
  ASSERT_EQ(stuck.batches.size(), 1u);
  EXPECT_EQ(stuck.batches[0], (std::vector<std::string>{"back"}));

  // Alone and not taking lines: the lines still reach the ring, and the follower its counts.
  // While no one is offered them, the ring takes a read's lines in pieces (issue 25): the views
  // held stay bounded however many lines one read has, and a quiet read gives them back.
  (*logs)->unfollow(2);
  stuck.taking = stuck.accept = false;
  stuck.missed_reads.clear();
  const size_t held = (*logs)->batch_buffer_bytes();
  const size_t scratch_held = BlockLogs::read_scratch_bytes();
  std::string flood;
  for (int i = 0; i < 50000; ++i) flood += "line " + std::to_string(i) + "\n";
  (*logs)->feed(LogStream::out, flood + "fatal: gone\n");
  ASSERT_EQ(stuck.missed_reads.size(), 1u);
  EXPECT_EQ(stuck.missed_reads[0][size_t(LogLevel::unknown)], 50000u);
  EXPECT_EQ(stuck.missed_reads[0][size_t(LogLevel::fatal)], 1u);
  EXPECT_LE(BlockLogs::read_scratch_bytes(), scratch_held + 4096 * sizeof(LogBatchLine))
      << "a view of every line held for no one";
  EXPECT_EQ((*logs)->tail(1).at(0).text, "fatal: gone");
  EXPECT_EQ((*logs)->tail(2).at(0).text, "line 49999");
  stuck.missed_reads.clear();
  (*logs)->feed(LogStream::out, "quiet\n");
  EXPECT_EQ((*logs)->batch_buffer_bytes(), held);
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

// Runs `loop` for `ms` (a referenced timer keeps it running that long).
void run_loop_for(uv_loop_t* loop, uint64_t ms) {
  uv_timer_t awake;
  uv_timer_init(loop, &awake);
  uv_timer_start(
      &awake, [](uv_timer_t*) {}, ms, 0);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t*>(&awake), nullptr);
  uv_run(loop, UV_RUN_DEFAULT);
}

// A burst of block events ends in one trim of the heap, HeapTrimmer::kQuietMs after the first
// of them; then nothing more happens. Its timer never keeps the loop running: a stopping
// daemon must exit at once (its successor waits for the lock).
TEST(HeapTrimmer, TrimsOnceAfterABurstOfEventsAndNeverHoldsTheLoop) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  {
    EventBus events;
    int trims = 0;
    HeapTrimmer trimmer(&loop, events, [&trims] { ++trims; });
    for (int i = 0; i < 3; ++i) events.publish("s", "b" + std::to_string(i), "id", "start");
    EXPECT_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0) << "the trim timer held the loop";
    EXPECT_EQ(trims, 0);
    run_loop_for(&loop, HeapTrimmer::kQuietMs + 300);
    EXPECT_EQ(trims, 1);
    events.publish("s", "b", "id", "die");
    run_loop_for(&loop, HeapTrimmer::kQuietMs + 300);
    EXPECT_EQ(trims, 2);
  }
  uv_run(&loop, UV_RUN_DEFAULT);  // the trimmer's handle closes
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace stackie
