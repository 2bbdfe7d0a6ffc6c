// The real paths a Seatbelt profile names (seatbelt_paths.h), on a real file tree: a link a
// block planted where it can write is refused, never resolved into the profile.
#include "sandbox/seatbelt_paths.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sandbox/confined_roots.h"
#include "support/temp_dir.h"

namespace stackie {
namespace {

class SeatbeltPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    char buffer[PATH_MAX];
    ASSERT_NE(::realpath(dir_.path().c_str(), buffer), nullptr);
    real_ = buffer;
    std::filesystem::create_directories(real_ + "/storage/data/db");
    std::filesystem::create_directories(real_ + "/project/conf");
    std::filesystem::create_directories(real_ + "/home/.ssh");
    dir_.write("home/.ssh/id_ed25519", "the user's key\n");
    policy_.storage_root = real_ + "/storage";
    policy_.link_free_roots = {real_ + "/project"};
  }

  // The policy with one read-only bind of `source`, resolved.
  Result<SandboxPolicy> resolve_bind(const std::string& source) {
    SandboxPolicy policy = policy_;
    policy.read_only.push_back(BindMount{source, "/mnt"});
    return seatbelt_resolve_paths(policy);
  }

  void plant_link(const std::string& at, const std::string& to) {
    std::filesystem::remove_all(at);
    ASSERT_EQ(::symlink(to.c_str(), at.c_str()), 0) << at;
  }

  testing::TempDir dir_{"seatbelt-paths"};
  std::string real_;
  SandboxPolicy policy_;
};

TEST_F(SeatbeltPaths, ALinkPlantedInStorageIsRefusedNotNamedInTheProfile) {
  plant_link(real_ + "/storage/data/db", real_ + "/home/.ssh");
  auto resolved = resolve_bind(real_ + "/storage/data/db");
  ASSERT_FALSE(resolved) << "resolved to " << resolved->read_only.at(0).source;
  EXPECT_EQ(resolved.error().code, -ELOOP);
  EXPECT_NE(resolved.error().message.find(real_ + "/storage/data/db: is a symbolic link"),
            std::string::npos)
      << resolved.error().message;
}

TEST_F(SeatbeltPaths, ALinkPlantedInAProjectABlockWritesIsRefused) {
  // A neighbour's `./conf:/etc/app` volume, swapped by a block that writes the project.
  plant_link(real_ + "/project/conf", real_ + "/home");
  EXPECT_FALSE(resolve_bind(real_ + "/project/conf"));
  // Also when the bound path is below the link, and when it does not exist yet there.
  EXPECT_FALSE(resolve_bind(real_ + "/project/conf/.ssh"));
  EXPECT_FALSE(resolve_bind(real_ + "/project/conf/not-yet/made"));
  // The temp directory is reached the same way.
  SandboxPolicy policy = policy_;
  plant_link(real_ + "/storage/tmp", real_ + "/home");
  policy.host_tmp_dir = real_ + "/storage/tmp";
  EXPECT_FALSE(seatbelt_resolve_paths(policy));
}

TEST_F(SeatbeltPaths, PathsWithNoLinkBecomeTheirRealPaths) {
  // The outermost roots' own paths are the user's and may hold links (macOS's /var is one).
  ASSERT_EQ(::symlink(real_.c_str(), (real_ + "/alias").c_str()), 0);
  policy_.storage_root = real_ + "/alias/storage";
  policy_.link_free_roots = {real_ + "/alias/project"};
  auto resolved = resolve_bind(real_ + "/alias/storage/data/db");
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ(resolved->read_only.at(0).source, real_ + "/storage/data/db");
  // Not made yet: the real path of what exists, the rest as written.
  resolved = resolve_bind(real_ + "/alias/project/conf/new/file");
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ(resolved->read_only.at(0).source, real_ + "/project/conf/new/file");
}

TEST_F(SeatbeltPaths, ALinkOutsideWhatBlocksWriteIsTheUsersOwnAndFollowed) {
  ASSERT_EQ(::symlink((real_ + "/home").c_str(), (real_ + "/home-link").c_str()), 0);
  auto resolved = resolve_bind(real_ + "/home-link/.ssh");
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ(resolved->read_only.at(0).source, real_ + "/home/.ssh");
}

#ifdef __linux__
// A grant of /proc/self/fd/N is a descriptor the launcher holds (its storage root): under
// Landlock it granted every block's volumes. Nothing is opened through /proc.
TEST_F(SeatbeltPaths, NothingIsReachedThroughProc) {
  auto roots = ConfinedRoots::open(policy_);
  ASSERT_TRUE(roots) << roots.error().message;
  UniqueFd held(::open((real_ + "/storage").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(held.valid());
  const std::string magic = "/proc/self/fd/" + std::to_string(held.get());
  auto opened = roots->open_path(magic);
  ASSERT_FALSE(opened) << magic << " was opened";
  EXPECT_EQ(opened.error().code, -EPERM);
  EXPECT_NE(opened.error().message.find("is reached through a link of /proc"), std::string::npos)
      << opened.error().message;
  // A link to it as well.
  ASSERT_EQ(::symlink(magic.c_str(), (real_ + "/home/alias").c_str()), 0);
  EXPECT_FALSE(roots->open_path(real_ + "/home/alias"));
  EXPECT_TRUE(roots->open_path(real_ + "/home/.ssh")) << "an ordinary path is opened";
}
#endif

// The paths a block may not make are named by the real path of the directory they would be
// made in; a link planted on the way there is refused like any other.
TEST_F(SeatbeltPaths, APathNotToBeMadeIsNamedThroughItsRealDirectory) {
  ASSERT_EQ(::symlink(real_.c_str(), (real_ + "/alias").c_str()), 0);
  SandboxPolicy policy = policy_;
  policy.link_free_roots = {real_ + "/alias/project"};
  policy.no_create = {real_ + "/alias/project/.env"};
  auto resolved = seatbelt_resolve_paths(policy);
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ(resolved->no_create, std::vector<std::string>{real_ + "/project/.env"});
  plant_link(real_ + "/project/conf", real_ + "/home");
  policy.no_create = {real_ + "/alias/project/conf/.env"};
  EXPECT_FALSE(seatbelt_resolve_paths(policy)) << "through conf, a link the block planted";
}

}  // namespace
}  // namespace stackie
