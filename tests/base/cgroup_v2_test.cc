// The pure parts of base/cgroup_v2.h: where a process's cgroup v2 directory is. The delegation
// check itself needs a real delegated cgroup (tests/sandbox/lockbox_cgroup_test.cc).
#include "base/cgroup_v2.h"

#include <gtest/gtest.h>

namespace stackie {
namespace {

TEST(CgroupV2, PathFromProcCgroup) {
  // A hybrid host: v1 controllers, then the unified line.
  EXPECT_EQ(cgroup_v2_path("9:name=systemd:/\n8:pids:/\n0::/\n"), "/");
  EXPECT_EQ(cgroup_v2_path("0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
                           "stackied.service\n"),
            "/user.slice/user-1000.slice/user@1000.service/app.slice/stackied.service");
  EXPECT_EQ(cgroup_v2_path("4:memory:/x\n1:cpu:/\n"), "") << "v1 only";
  EXPECT_EQ(cgroup_v2_path(""), "");
}

TEST(CgroupV2, MountPointFromMountinfo) {
  const char* pure_v2 =
      "22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
      "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec shared:9 - cgroup2 cgroup2 "
      "rw,nsdelegate\n";
  EXPECT_EQ(cgroup2_mount_point(pure_v2), "/sys/fs/cgroup");
  const char* hybrid =
      "31 30 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
      "32 30 0:28 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n";
  EXPECT_EQ(cgroup2_mount_point(hybrid), "/sys/fs/cgroup/unified");
  // A bind of a sub-cgroup (ROOT is not "/") does not map 0::PATH.
  EXPECT_EQ(cgroup2_mount_point("40 1 0:26 /sub /mnt/cg rw - cgroup2 cgroup2 rw\n"), "");
  EXPECT_EQ(cgroup2_mount_point("22 1 0:21 / /proc rw - proc proc rw\n"), "");
}

TEST(CgroupV2, ThisProcessEitherHasADelegatedCgroupOrSaysWhyNot) {
  auto found = find_delegated_cgroup();
  if (found.ok()) {
    EXPECT_TRUE(found->has("pids") && found->has("memory")) << found->dir;
  } else {
    EXPECT_FALSE(found.error().message.empty());
    EXPECT_EQ(found.error().message.find('\n'), std::string::npos) << found.error().message;
  }
}

}  // namespace
}  // namespace stackie
