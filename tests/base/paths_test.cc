#include "stack/paths.h"

#include <gtest/gtest.h>

#if !defined(_WIN32)
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#endif

#include <map>
#include <set>
#include <string>
#include <vector>

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
  EXPECT_EQ(state_file("/h"), "/h/state.json");
  EXPECT_EQ(daemon_log_file("/h"), "/h/stackied.log");
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

// Two blocks that share an id share a /tmp, a log directory and a cgroup: a stack's '-' are
// doubled so that "web" + "api-db" and "web-api" + "db" stay apart.
TEST(Paths, SandboxIdsOfDifferentBlocksDiffer) {
  EXPECT_EQ(sandbox_id("web", "api-db"), "web-api-db");
  EXPECT_EQ(sandbox_id("web-api", "db"), "web--api-db");
  EXPECT_EQ(sandbox_id("a-", "b"), "a---b");
  EXPECT_EQ(sandbox_id("a", "b--c"), "a-b--c");
  EXPECT_EQ(sandbox_id("a--b", "c"), "a----b-c");
  EXPECT_EQ(sandbox_id("a", "stackie.-b-c"), "a-stackie.-b-c");  // not a--b-c, a-b + c's
  EXPECT_EQ(sandbox_id("a-b", "c"), "a--b-c");
  // Every pair of a stack and a block among the names of up to four of 'a', '-' and '.' (valid:
  // not starting with '-' or '.'), the blocks also with "stackie." in front: one id for each pair
  // of a stack and a short name (a block and its "stackie." twin share one, and the loader
  // refuses them together). With a plain "<stack>-<block>", ("a", "a-a") and ("a-a", "a") were
  // both a-a-a.
  std::vector<std::string> names = {"a"};
  for (size_t from = 0; names.back().size() < 4;) {
    const size_t to = names.size();
    for (size_t i = from; i < to; ++i)
      for (char c : std::string("a-.")) names.push_back(names[i] + c);
    from = to;
  }
  std::vector<std::string> blocks = names;
  for (const auto& name : names)
    for (const char* prefix : {"stackie.", "stackie.-", "stackie.."})
      blocks.push_back(prefix + name);
  blocks.push_back("stackie.");
  std::map<std::string, std::string> owner_of;  // id -> "stack + short name"
  std::set<std::string> owners;
  for (const auto& stack : names)
    for (const auto& block : blocks) {
      const std::string owner = stack + " + " + block_short_name(block);
      owners.insert(owner);
      auto [at, added] = owner_of.emplace(sandbox_id(stack, block), owner);
      EXPECT_TRUE(added || at->second == owner) << owner << " has the id of " << at->second;
    }
  EXPECT_EQ(owner_of.size(), owners.size());
  EXPECT_EQ(owners.size(), names.size() * (3 * names.size() + 1));  // 40 x (40 + 40 + 40 + 1)
}

#if !defined(_WIN32)
// Links are followed and the path normalised: what the loader compares bind sources by.
TEST(Paths, PathsAreComparedWithTheirLinksFollowed) {
  char pattern[] = "/tmp/stackie-resolved-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  ASSERT_EQ(::mkdir((dir + "/real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir + "/real").c_str(), (dir + "/link").c_str()), 0);
  char real_dir[PATH_MAX];
  ASSERT_NE(::realpath(dir.c_str(), real_dir), nullptr);  // /tmp may itself be a link
  EXPECT_EQ(path_for_comparison(dir + "/link"), std::string(real_dir) + "/real");
  EXPECT_EQ(path_for_comparison(dir + "/link/"), std::string(real_dir) + "/real");
  EXPECT_EQ(path_for_comparison(dir + "/missing/../real"), std::string(real_dir) + "/real");
  ::unlink((dir + "/link").c_str());
  ::rmdir((dir + "/real").c_str());
  ::rmdir(dir.c_str());
}
#endif

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
