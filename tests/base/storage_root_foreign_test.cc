// Another local user's pre-made storage (issue 14: a predictable ephemeral tree in a shared
// /tmp) is refused by its owner, not only by its mode. Needs a second uid: run as root by
// scripts/test (suite 'root'); the check itself runs in a child that drops to uid/gid 65534.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/safe_open.h"

namespace stackie {
namespace {

constexpr uid_t kOtherUid = 65534;

// What open_storage_root(path) says as uid 65534: 0 opened, 1 refused as another user's, 2
// refused for its mode, 3 anything else.
int open_as_other_user(const std::string& path, Privacy privacy) {
  pid_t pid = ::fork();
  if (pid == 0) {
    // As root, setgid/setuid set the real, effective and saved ids alike (POSIX: setresuid
    // is not on macOS).
    if (::setgid(kOtherUid) != 0 || ::setuid(kOtherUid) != 0) std::_Exit(3);
    auto opened = open_storage_root(path, privacy);
    if (opened.ok()) std::_Exit(0);
    const std::string& message = opened.error().message;
    if (message.find("belongs to uid 0, not to you (uid 65534)") != std::string::npos)
      std::_Exit(1);
    if (message.find(" has mode ") != std::string::npos) std::_Exit(2);
    std::_Exit(3);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(ForeignStorageRoot, AnotherUsersDirectoryIsRefusedWhateverItsMode) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to check as a second uid";
  std::string templ = "/tmp/stackie-foreign-XXXXXX";
  ASSERT_NE(::mkdtemp(templ.data()), nullptr);
  std::string dir = templ;
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);  // the second uid may look in

  // Root's own (the "other user" from the child's view), private enough by its mode alone.
  std::string theirs = dir + "/theirs";
  ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(theirs.c_str(), 0755), 0);
  EXPECT_EQ(open_as_other_user(theirs, Privacy::owned), 1);
  // Made for everyone: writable by the child, and still not its storage.
  ASSERT_EQ(::chmod(theirs.c_str(), 0777), 0);
  EXPECT_EQ(open_as_other_user(theirs, Privacy::private_), 1);

  // The child's own directory is accepted; its mode still counts.
  std::string mine = dir + "/mine";
  ASSERT_EQ(::mkdir(mine.c_str(), 0700), 0);
  ASSERT_EQ(::chown(mine.c_str(), kOtherUid, kOtherUid), 0);
  EXPECT_EQ(open_as_other_user(mine, Privacy::private_), 0);
  ASSERT_EQ(::chmod(mine.c_str(), 0770), 0);
  EXPECT_EQ(open_as_other_user(mine, Privacy::private_), 2);

  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace stackie
