// `logs -f` from the files (cli/log_file_follow.h) against the daemon's own writer of them
// (supervisor/log_files.h): every record once and in order through rotations, from where the
// daemon's tail ended, a note for what was rotated away unread, and never a link followed.
#include "cli/log_file_follow.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "base/posix_io.h"
#include "base/safe_open.h"
#include "supervisor/log_files.h"
#include "support/temp_dir.h"

namespace stackie::cli {
namespace {

// "2026-12-04T10:00:00.000Z line N\n": a record as the daemon writes it.
std::string record(int n) {
  return "2026-12-04T10:00:00.000Z line " + std::to_string(n) + "\n";
}

std::string records(int from, int to) {
  std::string out;
  for (int n = from; n <= to; ++n) out += record(n);
  return out;
}

// As the daemon's `files` event says where a file is.
LogFileStart where(const std::string& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return {};
  return {static_cast<uint64_t>(info.st_ino), static_cast<uint64_t>(info.st_size),
          file_birth_us(AT_FDCWD, file.c_str())};
}

class LogFileFollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    auto opened = LogFiles::open(dir_, kMaxBytes, kCount, "");
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    files_ = std::move(*opened);
    auto made = LogFileFollow::create();
    ASSERT_TRUE(made.ok()) << made.error().message;
    follow_ = std::move(*made);
  }
  // Follows stdout.log from `start`.
  void follow_from(LogFileStart start) {
    auto added = follow_->add("s", "b", dir_, &start, nullptr);
    ASSERT_TRUE(added.ok()) << added.error().message;
  }
  // What stdout.log and its rotated files hold, the oldest first.
  std::string files_left() const {
    std::string left;
    for (const char* name : {"/stdout.log.2", "/stdout.log.1", "/stdout.log"}) {
      std::ifstream file(dir_ + name);
      left += std::string(std::istreambuf_iterator<char>(file), {});
    }
    return left;
  }
  void write(int from, int to) {
    auto written = files_->write(records(from, to), "");
    ASSERT_EQ(written.failed_batches, 0u) << written.first_error;
  }
  void drain() {
    follow_->drain(
        [&](const std::string& stack, const std::string& block, std::string_view stream,
            std::string_view got) {
          EXPECT_EQ(stack + "/" + block + " " + std::string(stream), "s/b stdout");
          EXPECT_EQ(got.back(), '\n') << "records are handed on whole";
          seen_ += got;
        },
        [&](const std::string&, const std::string&, const std::string& note) {
          notes_.push_back(note);
        });
  }

  static constexpr uint64_t kMaxBytes = 4096;  // a rotation every ~120 records
  static constexpr int kCount = 3;
  testing::TempDir temp_{"stackie-follow"};
  std::string dir_ = temp_ / "logs/blk";
  std::unique_ptr<LogFiles> files_;
  std::unique_ptr<LogFileFollow> follow_;
  std::string seen_;
  std::vector<std::string> notes_;
};

TEST_F(LogFileFollowTest, EveryRecordOnceAndInOrderThroughRotations) {
  follow_from({});  // no file yet: everything in the first one is new
  int n = 1;
  for (int round = 0; round < 40; ++round, n += 50) {
    write(n, n + 49);
    drain();
  }
  EXPECT_EQ(seen_, records(1, n - 1));
  EXPECT_TRUE(notes_.empty()) << notes_.front();
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/stdout.log.2")) << "the test rotated";
}

// No file when the daemon's tail ended: every file made since is new, rotated ones first.
TEST_F(LogFileFollowTest, FilesRotatedBeforeTheFirstLookAreReadOldestFirst) {
  follow_from({});
  write(1, 300);  // two rotations before the follower looks
  ASSERT_TRUE(std::filesystem::exists(dir_ + "/stdout.log.2"));
  drain();
  EXPECT_EQ(seen_, records(1, 300));
  EXPECT_TRUE(notes_.empty());
}

TEST_F(LogFileFollowTest, StartsWhereTheDaemonsTailEnded) {
  write(1, 10);
  const LogFileStart start = where(dir_ + "/stdout.log");
  write(11, 20);
  follow_from(start);
  drain();
  EXPECT_EQ(seen_, records(11, 20));
}

TEST_F(LogFileFollowTest, StartsInTheRenamedFileWhenARotationCameBetween) {
  write(1, 10);
  const LogFileStart start = where(dir_ + "/stdout.log");
  write(11, 200);  // past kMaxBytes: stdout.log became stdout.log.1
  ASSERT_NE(where(dir_ + "/stdout.log").inode, start.inode);
  follow_from(start);
  drain();
  EXPECT_EQ(seen_, records(11, 200));
  EXPECT_TRUE(notes_.empty());
}

// The file the daemon's tail ended in was rotated out of the directory before the follower
// looked: every file left is newer, so all of them are read, the oldest first, after a note.
TEST_F(LogFileFollowTest, AStartRotatedAwayBeforeTheFirstLookReadsEveryFileLeft) {
  write(1, 10);
  const LogFileStart start = where(dir_ + "/stdout.log");
  // Held open so that its inode cannot be given to a file made since (the next test).
  const UniqueFd held(::open((dir_ + "/stdout.log").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(held.valid());
  write(11, 1000);  // rotated past kCount files: the start's file is gone
  const std::string left = files_left();
  for (const char* name : {"/stdout.log.2", "/stdout.log.1", "/stdout.log"})
    ASSERT_NE(where(dir_ + name).inode, start.inode);
  follow_from(start);
  drain();
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("rotated away"), std::string::npos) << notes_[0];
  EXPECT_TRUE(seen_ == left) << "read from: " << seen_.substr(0, seen_.find('\n')) << ", "
                             << seen_.size() << " bytes of " << left.size();
  EXPECT_EQ(seen_.substr(seen_.size() - record(1000).size()), record(1000));
}

// As above, and the deleted start's inode was given to a newer file (ext4 gives a freed inode
// again at once), which has grown past the start's offset: it is not taken for the start (its
// birth tells them apart), so nothing is skipped without a word. Played without waiting for
// the file system to give the inode again: the start is said to be the current stdout.log's
// inode, with the start's offset and birth.
TEST_F(LogFileFollowTest, ANewerFileWithTheStartsInodeIsNotTakenForIt) {
  write(1, 10);
  const LogFileStart gone = where(dir_ + "/stdout.log");
  if (gone.born_us == 0) GTEST_SKIP() << "this file system keeps no birth time (statx)";
  // File times come from a coarse clock (a tick, 1-10 ms): the files made from here on are
  // born later than the start.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  write(11, 1000);  // rotated past kCount files: the start's file is gone
  write(1001, 1010);
  const LogFileStart newer = where(dir_ + "/stdout.log");
  ASSERT_GE(newer.offset, gone.offset) << "the newer file has grown past the start's offset";
  ASSERT_NE(newer.born_us, gone.born_us);
  const std::string left = files_left();
  follow_from({newer.inode, gone.offset, gone.born_us});
  drain();
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("rotated away"), std::string::npos) << notes_[0];
  EXPECT_TRUE(seen_ == left) << "read from: " << seen_.substr(0, seen_.find('\n')) << ", "
                             << seen_.size() << " bytes of " << left.size();
}

TEST_F(LogFileFollowTest, AFollowerThatFellBehindIsToldWhatWasRotatedAwayUnread) {
  follow_from({});
  write(1, 10);
  drain();
  for (int n = 11; n < 2000; n += 100) write(n, n + 99);  // many rotations, none read
  drain();
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("rotated away"), std::string::npos) << notes_[0];
  // What it did read is whole records, in order, ending with the last one written.
  EXPECT_EQ(seen_.rfind(records(1, 10), 0), 0u);
  const std::string last = record(2010);
  EXPECT_EQ(seen_.substr(seen_.size() - last.size()), last);
}

TEST_F(LogFileFollowTest, ARecordWrittenInTwoPiecesIsHandedOnWhole) {
  follow_from({});
  std::ofstream(dir_ + "/stdout.log", std::ios::app) << "2026-12-04T10:00:00.000Z half";
  drain();
  EXPECT_EQ(seen_, "");
  std::ofstream(dir_ + "/stdout.log", std::ios::app) << " and half\n";
  drain();
  EXPECT_EQ(seen_, "2026-12-04T10:00:00.000Z half and half\n");
}

TEST_F(LogFileFollowTest, ALinkPlantedAsTheLogFileIsNotFollowed) {
  const std::string secret = temp_.write("secret.txt", "the user's secret\n");
  files_.reset();
  std::filesystem::remove(dir_ + "/stdout.log");
  ASSERT_EQ(::symlink(secret.c_str(), (dir_ + "/stdout.log").c_str()), 0);
  follow_from({});
  drain();
  EXPECT_EQ(seen_, "");
}

TEST_F(LogFileFollowTest, ADirectoryMadeAgainIsFollowedThere) {
  follow_from({});
  write(1, 5);
  drain();
  std::filesystem::remove_all(dir_);
  write(6, 10);  // the writer makes the directory again
  // Seen without a change in any other followed file: its parent is watched too.
  auto ready = follow_->wait(-1, 1000);
  ASSERT_TRUE(ready.ok());
  EXPECT_TRUE(ready->files) << "the new directory woke nobody";
  drain();
  EXPECT_EQ(seen_, records(1, 10));
  EXPECT_TRUE(notes_.empty()) << notes_.front();
}

// A directory where stdout.log was (no file can be written there: the daemon says so and sends
// the lines, daemon_test.cc): the follower reads what it had and waits, it does not spin.
TEST_F(LogFileFollowTest, ADirectoryPlantedAsTheLogFileIsNoFileToFollow) {
  follow_from({});
  write(1, 5);
  drain();
  std::filesystem::remove(dir_ + "/stdout.log");
  std::filesystem::create_directory(dir_ + "/stdout.log");
  drain();  // returns
  drain();
  EXPECT_EQ(seen_, records(1, 5));
  EXPECT_LE(notes_.size(), 1u);
}

// One file kept (logs.max_files = 1): it is cut in place, not renamed. The follower starts it
// again from its start, says lines may be missing, and hands on whole records only.
TEST(LogFileFollowOneFile, AFileCutInPlaceIsReadAgainFromItsStart) {
  testing::TempDir temp{"stackie-follow"};
  const std::string dir = temp / "logs/one";
  auto files = LogFiles::open(dir, 4096, 1, "");
  ASSERT_TRUE(files.ok()) << files.error().message;
  auto follow = LogFileFollow::create();
  ASSERT_TRUE(follow.ok());
  LogFileStart none;
  ASSERT_TRUE((*follow)->add("s", "b", dir, &none, nullptr).ok());
  std::string seen;
  int notes = 0;
  auto drain = [&] {
    (*follow)->drain([&](const std::string&, const std::string&, std::string_view,
                         std::string_view got) { seen += got; },
                     [&](const std::string&, const std::string&, const std::string&) { ++notes; });
  };
  (*files)->write(records(1, 100), "");
  drain();
  ASSERT_EQ(seen, records(1, 100));
  (*files)->write(records(101, 200), "");  // past 4096 bytes: cut, then these written
  (*files)->write(records(201, 202), "");
  drain();
  EXPECT_EQ(notes, 1);
  const std::string last = record(202);
  ASSERT_GE(seen.size(), last.size());
  EXPECT_EQ(seen.substr(seen.size() - last.size()), last);
  for (size_t at = 0; at < seen.size(); at = seen.find('\n', at) + 1)
    EXPECT_EQ(seen.compare(at, 5, "2026-"), 0) << "a record cut in two at " << at;
}

// A block that floods does not hold up the others: one drain takes at most 8 MiB of a file,
// and says there is more.
TEST(LogFileFollowBudget, OneDrainTakesAPieceOfAFloodAndSaysThereIsMore) {
  testing::TempDir temp{"stackie-follow"};
  const std::string dir = temp / "logs/flood";
  auto files = LogFiles::open(dir, uint64_t{64} << 20, 2, "");
  ASSERT_TRUE(files.ok()) << files.error().message;
  const std::string flood = records(1, 300000);  // about 12 MB
  ASSERT_GT(flood.size(), size_t{8} << 20);
  ASSERT_EQ((*files)->write(flood, "").failed_batches, 0u);
  auto follow = LogFileFollow::create();
  ASSERT_TRUE(follow.ok());
  LogFileStart none;
  ASSERT_TRUE((*follow)->add("s", "b", dir, &none, nullptr).ok());
  std::string seen;
  auto drain = [&] {
    return (*follow)->drain([&](const std::string&, const std::string&, std::string_view,
                                std::string_view got) { seen += got; },
                            [&](const std::string&, const std::string&, const std::string&) {});
  };
  EXPECT_FALSE(drain()) << "all of it in one drain";
  EXPECT_LE(seen.size(), size_t{8} << 20);
  EXPECT_TRUE(drain());
  EXPECT_EQ(seen, flood);
}

}  // namespace
}  // namespace stackie::cli
