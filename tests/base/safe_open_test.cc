// The safe-path primitives (base/safe_open.h): nothing below a storage root is followed out of
// it. Every case runs twice: with openat2 and with the portable O_NOFOLLOW walk.
#include "base/safe_open.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace stackie {
namespace {

class SafeOpen : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    force_walk_for_testing(GetParam());
    ASSERT_TRUE(temp_.ok());
    dir_ = temp_.path();
    root_ = dir_ + "/storage";
    outside_ = dir_ + "/outside";
    ASSERT_EQ(::mkdir(outside_.c_str(), 0700), 0);
    std::ofstream(outside_ + "/secret") << "key\n";
  }
  void TearDown() override { force_walk_for_testing(false); }
  UniqueFd root() {
    auto fd = open_storage_root(root_, Privacy::owned);
    EXPECT_TRUE(fd.ok()) << (fd.ok() ? "" : fd.error().message);
    return fd.ok() ? std::move(*fd) : UniqueFd();
  }
  std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  testing::TempDir temp_{"stackie-safe"};
  std::string dir_, root_, outside_;  // dir_: temp_'s path
};

INSTANTIATE_TEST_SUITE_P(Openat2AndWalk, SafeOpen, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "walk" : "openat2";
                         });

TEST_P(SafeOpen, CreatesDirectoriesBelowTheRootPrivate) {
  UniqueFd fd = root();
  auto made = make_directories_beneath(fd.get(), "volumes/s/b/data", root_);
  ASSERT_TRUE(made.ok()) << made.error().message;
  struct stat st {};
  ASSERT_EQ(::stat((root_ + "/volumes/s/b/data").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(make_directories_beneath(fd.get(), "volumes/s/b/data", root_).ok());  // again
}

TEST_P(SafeOpen, ASymlinkOnTheWayIsRefusedAndNamed) {
  UniqueFd fd = root();
  ASSERT_TRUE(make_directories_beneath(fd.get(), "tmp/s-b", root_).ok());
  ASSERT_EQ(::symlink(outside_.c_str(), (root_ + "/tmp/s-b/run").c_str()), 0);
  auto made = make_directories_beneath(fd.get(), "tmp/s-b/run/sub", root_);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find(root_ + "/tmp/s-b/run: is a symbolic link"),
            std::string::npos)
      << made.error().message;
  EXPECT_FALSE(std::filesystem::exists(outside_ + "/sub")) << "created through the link";

  auto opened = open_beneath(fd.get(), "tmp/s-b/run", kOpenPathOnly, root_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, -ELOOP) << opened.error().message;
  EXPECT_FALSE(open_beneath(fd.get(), "tmp/s-b/run/secret", O_RDONLY, root_).ok());
}

TEST_P(SafeOpen, NoClimbingOut) {
  UniqueFd fd = root();
  EXPECT_FALSE(open_beneath(fd.get(), "../outside/secret", O_RDONLY, root_).ok());
  EXPECT_FALSE(open_beneath(fd.get(), "/etc/passwd", O_RDONLY, root_).ok());
  EXPECT_FALSE(make_directories_beneath(fd.get(), "a/../../x", root_).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x"));
}

TEST_P(SafeOpen, RemovesATreeWithoutFollowingLinksInIt) {
  UniqueFd fd = root();
  ASSERT_TRUE(make_directories_beneath(fd.get(), "tmp/s-b/run/deep", root_).ok());
  std::ofstream(root_ + "/tmp/s-b/run/deep/file") << "x";
  ASSERT_EQ(::symlink(outside_.c_str(), (root_ + "/tmp/s-b/run/link").c_str()), 0);
  ASSERT_TRUE(remove_tree_beneath(fd.get(), "tmp/s-b/run", root_).ok());
  EXPECT_FALSE(std::filesystem::exists(root_ + "/tmp/s-b/run"));
  EXPECT_TRUE(std::filesystem::exists(root_ + "/tmp/s-b"));
  EXPECT_EQ(read(outside_ + "/secret"), "key\n") << "the link's target is untouched";
  EXPECT_TRUE(remove_tree_beneath(fd.get(), "tmp/s-b/run", root_).ok()) << "missing is fine";

  // A link as the tree itself is removed as a link; a link on the way is refused.
  ASSERT_EQ(::symlink(outside_.c_str(), (root_ + "/tmp/s-b/gone").c_str()), 0);
  ASSERT_TRUE(remove_tree_beneath(fd.get(), "tmp/s-b/gone", root_).ok());
  EXPECT_TRUE(std::filesystem::exists(outside_ + "/secret"));
  ASSERT_EQ(::symlink(outside_.c_str(), (root_ + "/tmp/s-b/via").c_str()), 0);
  EXPECT_FALSE(remove_tree_beneath(fd.get(), "tmp/s-b/via/secret", root_).ok());
  EXPECT_TRUE(std::filesystem::exists(outside_ + "/secret"));
}

TEST_P(SafeOpen, FilesAreNeverOpenedThroughALink) {
  UniqueFd fd = root();
  auto logs = make_directories_beneath(fd.get(), "logs/s-b", root_);
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(::symlink((outside_ + "/secret").c_str(), (root_ + "/logs/s-b/stderr.log").c_str()), 0);
  auto opened =
      open_file_in(logs->get(), "stderr.log", O_WRONLY | O_APPEND | O_CREAT, root_ + "/logs/s-b");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("stderr.log: is a symbolic link"), std::string::npos)
      << opened.error().message;
  ASSERT_EQ(::mkfifo((root_ + "/logs/s-b/stdout.log").c_str(), 0600), 0);
  EXPECT_FALSE(
      open_file_in(logs->get(), "stdout.log", O_WRONLY | O_APPEND | O_CREAT, root_ + "/logs/s-b")
          .ok())
      << "a FIFO is refused at once";
  auto created =
      open_file_in(logs->get(), "new.log", O_WRONLY | O_APPEND | O_CREAT, root_ + "/logs/s-b");
  ASSERT_TRUE(created.ok()) << created.error().message;
  struct stat st {};
  ASSERT_EQ(::fstat(created->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(read(outside_ + "/secret"), "key\n");
}

// A rotation step: the renamed file takes the place of one in the way (removed first, so that
// the rename replaces nothing), a missing source leaves the target alone and says ENOENT, and
// a link in either place is moved or removed as itself, never followed.
TEST_P(SafeOpen, RenamingOverAFileRemovesItFirstAndFollowsNothing) {
  UniqueFd fd = root();
  auto logs = make_directories_beneath(fd.get(), "logs/s-b", root_);
  ASSERT_TRUE(logs.ok());
  const std::string at = root_ + "/logs/s-b";
  std::ofstream(at + "/out.log") << "new\n";
  std::ofstream(at + "/out.log.1") << "old\n";
  ASSERT_TRUE(rename_in_removing_target(logs->get(), "out.log", "out.log.1", at).ok());
  EXPECT_EQ(read(at + "/out.log.1"), "new\n");
  EXPECT_NE(::access((at + "/out.log").c_str(), F_OK), 0);

  auto missing = rename_in_removing_target(logs->get(), "out.log", "out.log.1", at);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, -ENOENT);
  EXPECT_EQ(read(at + "/out.log.1"), "new\n") << "no source: the target stays";

  ASSERT_EQ(::symlink((outside_ + "/secret").c_str(), (at + "/out.log.2").c_str()), 0);
  ASSERT_TRUE(rename_in_removing_target(logs->get(), "out.log.1", "out.log.2", at).ok());
  EXPECT_EQ(read(at + "/out.log.2"), "new\n");
  EXPECT_EQ(read(outside_ + "/secret"), "key\n");
  ASSERT_EQ(::symlink((outside_ + "/secret").c_str(), (at + "/out.log.3").c_str()), 0);
  ASSERT_TRUE(rename_in_removing_target(logs->get(), "out.log.3", "out.log.2", at).ok());
  struct stat st {};
  ASSERT_EQ(::lstat((at + "/out.log.2").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link moved as itself";
  EXPECT_EQ(read(outside_ + "/secret"), "key\n");
}

TEST_P(SafeOpen, AStorageRootOpenToOthersIsRefused) {
  ASSERT_EQ(::mkdir(root_.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(root_.c_str(), 0777), 0);
  auto opened = open_storage_root(root_, Privacy::owned);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("mode 0777"), std::string::npos) << opened.error().message;
  ASSERT_EQ(::chmod(root_.c_str(), 0750), 0);
  EXPECT_TRUE(open_storage_root(root_, Privacy::owned).ok());
  EXPECT_FALSE(open_storage_root(root_, Privacy::private_).ok()) << "ephemeral: 0700 only";
  ASSERT_EQ(::chmod(root_.c_str(), 0700), 0);
  EXPECT_TRUE(open_storage_root(root_, Privacy::private_).ok());
}

TEST(PathBelow, IsLexicalAndExact) {
  EXPECT_EQ(path_below("/s", "/s/a/b"), "a/b");
  EXPECT_EQ(path_below("/s", "/s"), "");
  EXPECT_EQ(path_below("/s", "/sx/a"), std::nullopt);
  EXPECT_EQ(path_below("/s", "/t"), std::nullopt);
  EXPECT_EQ(path_below("/", "/a"), "a");
}

}  // namespace
}  // namespace stackie
