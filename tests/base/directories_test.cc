#include "base/directories.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/temp_dir.h"

namespace stackie {
namespace {

mode_t mode_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST(MakeDirectories, CreatesEveryMissingLevelPrivate) {
  testing::TempDir temp;
  const std::string& root = temp.path();
  ::chmod(root.c_str(), 0755);
  ASSERT_TRUE(make_directories(root + "/a/b/c").ok());
  EXPECT_EQ(mode_of(root + "/a"), 0700u);
  EXPECT_EQ(mode_of(root + "/a/b/c"), 0700u);
  EXPECT_EQ(mode_of(root), 0755u);                      // an existing directory keeps its mode
  EXPECT_TRUE(make_directories(root + "/a/b/c").ok());  // idempotent
}

TEST(MakeDirectories, AFileInTheWayIsAnError) {
  testing::TempDir temp;
  std::string file = temp / "file";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  Status status = make_directories(file + "/sub");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find(file), std::string::npos) << status.error().message;
}

}  // namespace
}  // namespace stackie
