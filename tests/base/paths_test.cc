#include "stack/paths.h"

#include <gtest/gtest.h>

namespace stackie {
namespace {

TEST(Paths, StackieHomeFromEnvironmentOnly) {
  EXPECT_EQ(*stackie_home({{"STACKIE_HOME", "/srv/st/"}, {"HOME", "/home/a"}}), "/srv/st");
  EXPECT_EQ(*stackie_home({{"HOME", "/home/a"}}), "/home/a/.stackie");
  EXPECT_FALSE(stackie_home({}).ok());
  EXPECT_FALSE(stackie_home({{"STACKIE_HOME", "rel"}}).ok());
}

TEST(Paths, SocketPathPrecedence) {
  Settings settings;
  Environment env{{"HOME", "/home/a"}};
  EXPECT_EQ(*socket_path(env, settings), "/home/a/.stackie/run/stackied.sock");
  env["XDG_RUNTIME_DIR"] = "/run/user/1000";
  EXPECT_EQ(*socket_path(env, settings), "/run/user/1000/stackie/stackied.sock");
  settings.socket_path = "/tmp/s.sock";
  EXPECT_EQ(*socket_path(env, settings), "/tmp/s.sock");
}

TEST(Paths, StorageLayout) {
  Settings settings;
  EXPECT_EQ(storage_root("/h", settings), "/h/storage");
  settings.storage_root = "/big/disk/";
  EXPECT_EQ(storage_root("/h", settings), "/big/disk");
  EXPECT_EQ(volume_dir("/s", "shop", "postgres/data"), "/s/volumes/shop/postgres/data");
  EXPECT_EQ(log_dir("/s", "shop-postgres"), "/s/logs/shop-postgres");
  EXPECT_EQ(tmp_dir("/s", "shop-postgres"), "/s/tmp/shop-postgres");
  EXPECT_EQ(config_path("/h"), "/h/config.toml");
  EXPECT_EQ(pid_file("/h"), "/h/stackied.pid");
}

// Issue 14: never a predictable name in a shared /tmp.
TEST(Paths, EphemeralStorageIsInThePrivateRuntimeDirElseTheHome) {
  EXPECT_EQ(ephemeral_base("/home/u/.stackie", "/run/user/1000"),
            "/run/user/1000/stackie/ephemeral");
  EXPECT_EQ(ephemeral_base("/home/u/.stackie", ""), "/home/u/.stackie/ephemeral");
  EXPECT_EQ(ephemeral_base("/home/u/.stackie", "relative"), "/home/u/.stackie/ephemeral");
}

TEST(Paths, SandboxIdsDropTheStackiePrefixOnly) {
  EXPECT_EQ(sandbox_id("shop", "stackie.postgres"), "shop-postgres");
  EXPECT_EQ(sandbox_id("shop", "api"), "shop-api");
  EXPECT_EQ(sandbox_id("shop", "acme.stackie.x"), "shop-acme.stackie.x");
}

TEST(Paths, BlockPathOrder) {
  auto dirs = default_block_path({{"STACKIE_BLOCK_PATH", "/a::/b"}});
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/a");
  EXPECT_EQ(dirs[1], "/b");
  // Then next to the running executable, then the configured data directory.
  EXPECT_EQ(dirs[2], normalize_path(executable_dir() + "/../share/stackie/blocks"));
  EXPECT_EQ(dirs.back(), std::string(STACKIE_DATADIR) + "/blocks");
}

TEST(Paths, Normalize) {
  EXPECT_EQ(normalize_path("/a/./b//c/../d/"), "/a/b/d");
  EXPECT_EQ(normalize_path("/.."), "/");
  EXPECT_EQ(join_path("/a/", "/b"), "/a/b");
}

}  // namespace
}  // namespace stackie
