// FileWatch on a real loop and a real directory tree: debounced batches, directories made
// later, and a tree a block may have planted symlinks in.
#include "cli/file_watch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "support/temp_dir.h"

namespace stackie::cli {
namespace {

using testing::TempDir;

class FileWatchTest : public ::testing::Test {
 protected:
  void SetUp() override { uv_loop_init(&loop_); }
  void TearDown() override {
    watch_.reset();
    uv_run(&loop_, UV_RUN_NOWAIT);
    uv_loop_close(&loop_);
  }
  void start(const std::string& root, std::vector<std::string> paths = {"."},
             std::vector<std::string> ignore = {}) {
    WatchSpec spec;
    spec.root = root;
    spec.paths = std::move(paths);
    spec.ignore = std::move(ignore);
    spec.debounce = Milliseconds(100);
    auto started = FileWatch::start(
        &loop_, spec, [this](std::vector<std::string> changed) { batches_.push_back(changed); },
        [this](const std::string& note) { notes_.push_back(note); });
    ASSERT_TRUE(started.ok()) << started.error().message;
    watch_ = std::move(*started);
  }
  // Runs the loop until `batches` batches came, bounded (5 s), then a little longer to see
  // that no other batch follows.
  void run_for_batches(size_t batches) {
    for (int i = 0; i < 500 && batches_.size() < batches; ++i) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      ::usleep(10000);
    }
    for (int i = 0; i < 30; ++i) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      ::usleep(10000);
    }
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  uv_loop_t loop_{};
  std::unique_ptr<FileWatch> watch_;
  std::vector<std::vector<std::string>> batches_;
  std::vector<std::string> notes_;
};

TEST_F(FileWatchTest, SeveralWritesMakeOneBatchOfWhatCounts) {
  TempDir dir;
  dir.write("src/app.py", "1");
  start(dir.path(), {"src"}, {"*.tmp"});
  write(dir / "src/app.py", "2");
  write(dir / "src/app.py", "3");
  write(dir / "src/other.tmp", "x");
  write(dir / "README", "not watched");
  run_for_batches(1);
  ASSERT_EQ(batches_.size(), 1u);
  EXPECT_EQ(batches_[0], (std::vector<std::string>{"src/app.py"}));
}

TEST_F(FileWatchTest, ADirectoryMadeLaterIsWatchedToo) {
  TempDir dir;
  start(dir.path());
  ASSERT_EQ(::mkdir((dir / "new").c_str(), 0700), 0);
  run_for_batches(1);
  batches_.clear();
  write(dir / "new/file.c", "x");
  run_for_batches(1);
  ASSERT_EQ(batches_.size(), 1u);
  EXPECT_EQ(batches_[0], (std::vector<std::string>{"new/file.c"}));
  EXPECT_EQ(watch_->directories(), 2u);
}

// A block writes its project directory: a symlink it plants there must not make the watcher
// reach elsewhere (the user's home), neither at the start nor when it appears later.
TEST_F(FileWatchTest, SymlinksInTheTreeAreNotFollowed) {
  TempDir outside;
  TempDir dir;
  outside.write("secret/file", "x");
  ASSERT_EQ(::symlink((outside / "secret").c_str(), (dir / "planted").c_str()), 0);
  start(dir.path());
  EXPECT_EQ(watch_->directories(), 1u) << "only the root; the link is not a directory to watch";
  ASSERT_EQ(::symlink(outside.path().c_str(), (dir / "later").c_str()), 0);
  run_for_batches(1);
  batches_.clear();
  write(outside / "secret/file", "changed");
  write(outside / "other", "new");
  run_for_batches(1);
  EXPECT_TRUE(batches_.empty()) << "a change outside the project came through a link";
  EXPECT_EQ(watch_->directories(), 1u);
}

TEST_F(FileWatchTest, ARootThatIsALinkIsRefused) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir / "real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir / "real").c_str(), (dir / "link").c_str()), 0);
  WatchSpec spec;
  spec.root = dir / "link";
  spec.paths = {"."};
  auto started = FileWatch::start(
      &loop_, spec, [](std::vector<std::string>) {}, nullptr);
  EXPECT_FALSE(started.ok());
}

}  // namespace
}  // namespace stackie::cli
