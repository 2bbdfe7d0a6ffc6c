// `mode: shared` in the loader (stack/shared_mode.h): two stacks asking for the same shared
// instance resolve it alike (its id, paths and storage are the instance's, not either stack's),
// what differs between two requests is named (a host port a request names, too), and the
// host-port request is the instance's.
// The refusals with their positions are bad fixtures (tests/fixtures/bad/shared_*.yml).
#include "stack/shared_mode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "resolved_lookup.h"
#include "stack/loader.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::env_value;
using testing::find_block;
using testing::TempDir;

// One user (one STACKIE_HOME, one fake host) with several project directories.
struct User {
  TempDir home;
  TempDir programs;  // a fake install tree (LoadOptions::program_root)
  User() {
    for (const char* program : {"postgres", "initdb", "pg_isready"})
      programs.program(std::string("usr/lib/postgresql/16/bin/") + program);
    for (const char* program : {"postgres", "initdb", "pg_isready"})
      programs.program(std::string("usr/lib/postgresql/15/bin/") + program);
    programs.program("usr/bin/redis-server");
    programs.program("usr/bin/redis-cli");
  }
  LoadOptions options(const std::string& project, const std::string& stack_text,
                      const std::string& secrets = "") const {
    home.write(project + "/stackie-stack.yml", stack_text);
    if (!secrets.empty()) home.write(project + "/stackie-stack.secrets.yml", secrets);
    LoadOptions options;
    options.cwd = home / project;
    options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "s"}, {"PATH", "/usr/bin:/bin"}};
    options.block_path = {testing::shipped_catalog()};
    options.shipped_block_path = options.block_path;
    options.os = "linux";
    options.program_root = programs.path();
    return options;
  }
  Result<ResolvedStack> load(const std::string& project, const std::string& stack_text,
                             const std::string& secrets = "") const {
    return load_stack(options(project, stack_text, secrets));
  }
};

bool binds(const ResolvedBlock& block, const std::string& path) {
  const auto& rw = block.policy.read_write;
  return std::any_of(rw.begin(), rw.end(), [&](const BindMount& b) { return b.source == path; });
}

TEST(SharedMode, TwoStacksResolveTheSameInstanceInTheUsersStorage) {
  User user;
  auto one = user.load("one",
                       "one:\n  blocks:\n    stackie.redis: {mode: shared}\n"
                       "    app:\n      command: [/bin/sh, -c, 'exec sleep 1']\n"
                       "      consumes: {cache: stackie.redis}\n");
  ASSERT_TRUE(one.ok()) << one.error().message;
  // The second names it in its own way, and keeps its own storage elsewhere.
  auto two =
      user.load("two", "two:\n  storage_root: " + user.home / "elsewhere" +
                           "\n  blocks:\n    cache: {catalog: stackie.redis, mode: shared}\n");
  ASSERT_TRUE(two.ok()) << two.error().message;
  const ResolvedBlock* a = find_block(*one, "stackie.redis");
  const ResolvedBlock* b = find_block(*two, "cache");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->shared_instance, "stackie.redis");
  EXPECT_EQ(b->shared_instance, "stackie.redis");
  EXPECT_EQ(a->sandbox_id, "shared.redis");
  EXPECT_EQ(b->sandbox_id, "shared.redis");
  std::string data = user.home / "s/storage/volumes/@shared/redis/data";
  EXPECT_TRUE(binds(*a, data));
  EXPECT_TRUE(binds(*b, data)) << "the instance's data followed the stack's storage_root";
  EXPECT_EQ(b->policy.storage_root, user.home / "s/storage");
  EXPECT_EQ(b->policy.host_tmp_dir, user.home / "s/storage/tmp/shared.redis");
  EXPECT_EQ(shared_difference(shared_instance_spec(*a), *b), std::nullopt);
  // The stack's own block keeps the stack's id and storage.
  EXPECT_EQ(find_block(*one, "app")->sandbox_id, "one-app");
  EXPECT_EQ(find_block(*one, "app")->shared_instance, "");
  EXPECT_EQ(find_block(*one, "app")->consumes[0].provider, "stackie.redis");
  // The instance as the shared stack runs it: its own name, nothing of the asking stack's.
  ResolvedBlock instance = shared_instance_spec(*b);
  EXPECT_EQ(instance.name, "stackie.redis");
  EXPECT_TRUE(instance.consumes.empty());
}

TEST(SharedMode, ADifferentVarIsNamedNotItsValue) {
  User user;
  std::string text = "p:\n  blocks:\n    stackie.postgres: {mode: shared}\n";
  auto one = user.load("one", text, "secrets:\n  POSTGRES_PASSWORD: first-secret\n");
  auto two = user.load("two", text, "secrets:\n  POSTGRES_PASSWORD: other-secret\n");
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_TRUE(two.ok()) << two.error().message;
  auto differs = shared_difference(shared_instance_spec(one->blocks[0]), two->blocks[0]);
  ASSERT_TRUE(differs.has_value());
  EXPECT_EQ(*differs, "vars.password");
  // The same password from either project: the same instance.
  auto three = user.load("three", text, "secrets:\n  POSTGRES_PASSWORD: first-secret\n");
  ASSERT_TRUE(three.ok()) << three.error().message;
  EXPECT_EQ(shared_difference(shared_instance_spec(one->blocks[0]), three->blocks[0]),
            std::nullopt);
  auto four = user.load(
      "four", "p:\n  blocks:\n    stackie.postgres: {mode: shared, vars: {database: shop}}\n",
      "secrets:\n  POSTGRES_PASSWORD: first-secret\n");
  ASSERT_TRUE(four.ok()) << four.error().message;
  EXPECT_EQ(shared_difference(shared_instance_spec(one->blocks[0]), four->blocks[0]),
            std::optional<std::string>("vars.database"));
}

TEST(SharedMode, AVersionIsAnInstanceOfItsOwn) {
  User user;
  auto pg15 = user.load("one",
                        "p:\n  blocks:\n    stackie.postgres: {mode: shared, version: \"15\","
                        " vars: {password: pw}}\n");
  ASSERT_TRUE(pg15.ok()) << pg15.error().message;
  const ResolvedBlock& block = pg15->blocks[0];
  EXPECT_EQ(block.shared_instance, "stackie.postgres@15");
  EXPECT_EQ(block.sandbox_id, "shared.postgres.15");
  EXPECT_TRUE(binds(block, user.home / "s/storage/volumes/@shared/postgres.15/data"));
  EXPECT_EQ(env_value(block, "PGDATA"), user.home / "s/storage/volumes/@shared/postgres.15/data");
}

// A repository's own definition named "postgres" (from its `sources:`) was handed the user's
// stackie.postgres data: both were volumes/@shared/postgres and sandbox shared.postgres. A
// project's definition is not shared at all (whatever its name, stackie.postgres too); one of
// the user's own block directories that is not the catalog's name lives apart.
TEST(SharedMode, AnotherDefinitionOfTheSameNameGetsNoneOfTheCatalogsData) {
  User user;
  const std::string definition =
      "  serves: {pg: {port: 5432}}\n  paths: {data: {volume: data}}\n"
      "  command: [/bin/sh, -c, 'cat ${paths.data}/*']\n";
  user.home.write("repo/defs/postgres.yml", "postgres:\n" + definition);
  user.home.write("repo/defs/stackie.postgres.yml", "stackie.postgres:\n" + definition);
  for (const char* name : {"postgres", "stackie.postgres"}) {
    auto repo = user.load("repo", std::string("r:\n  sources: [./defs]\n  blocks:\n    ") + name +
                                      ": {mode: shared}\n");
    ASSERT_FALSE(repo.ok()) << name;
    EXPECT_NE(repo.error().message.find("mode shared is for the catalog's blocks; '" +
                                        std::string(name) + "' is defined by the project"),
              std::string::npos)
        << repo.error().message;
  }

  user.home.write("mine/blocks/postgres.yml", "postgres:\n" + definition);
  LoadOptions options = user.options("mine",
                                     "m:\n  blocks:\n    postgres: {mode: shared}\n"
                                     "    stackie.redis: {mode: shared}\n");
  options.block_path.push_back(user.home / "mine/blocks");
  auto mine = load_stack(options);
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  const ResolvedBlock* own = find_block(*mine, "postgres");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->sandbox_id, "shared..postgres");
  EXPECT_TRUE(binds(*own, user.home / "s/storage/volumes/@shared/@postgres/data"));
  EXPECT_EQ(own->policy.host_tmp_dir, user.home / "s/storage/tmp/shared..postgres");
}

// Every pair of (definition, version) has a directory and a sandbox id of its own, the id is a
// valid sandbox name and never a stack's block's; the catalog's names keep the directories
// their data has always had.
TEST(SharedMode, EachDefinitionAndVersionHasADirectoryAndIdOfItsOwn) {
  const std::vector<std::string> definitions = {"postgres",     "stackie.postgres",
                                                "stackie.pg",   "stackie.pg.15",
                                                "pg.15",        "stackie.",
                                                "stackie.-x",   "stackie._x",
                                                "_x",           "a-b",
                                                "a_b",          "stackie.a-b",
                                                "stackie.a_b",  "stackie.a--b",
                                                "stackie.a.b",  "stackie.a._b",
                                                "stackie.a_.b", "shared",
                                                "x..y",         "x.",
                                                "stackie.x."};
  const std::vector<std::string> versions = {"",    "15",   "1-5", "1_5", "1.5",
                                             "15.", "1..5", "_",   "b"};
  std::map<std::string, std::string> dirs;
  std::map<std::string, std::string> ids;
  for (const auto& definition : definitions)
    for (const auto& version : versions) {
      const std::string who = definition + " @ " + version;
      const std::string dir = shared_instance_dir(definition, version);
      const std::string id = shared_sandbox_id(definition, version);
      EXPECT_TRUE(dirs.emplace(dir, who).second) << dir << ": " << who << " and " << dirs[dir];
      EXPECT_TRUE(ids.emplace(id, who).second) << id << ": " << who << " and " << ids[id];
      SandboxPolicy policy;
      policy.name = id;
      EXPECT_TRUE(validate(policy).ok()) << id;
      EXPECT_EQ(dir.find('/'), std::string::npos) << dir;
      // A block id has a run of '-' of odd length; a shared id has none.
      size_t run = 0;
      for (char c : id + " ") {
        if (c == '-') {
          ++run;
          continue;
        }
        EXPECT_EQ(run % 2, 0u) << id;
        run = 0;
      }
    }
  EXPECT_EQ(shared_instance_dir("stackie.postgres", ""), "postgres");
  EXPECT_EQ(shared_instance_dir("stackie.postgres", "15"), "postgres.15");
  EXPECT_EQ(shared_instance_dir("postgres", "15"), "@postgres@15");
  EXPECT_EQ(shared_sandbox_id("stackie.pg.15", "3"), "shared..stackie._pg._15..3");
}

TEST(SharedMode, PortsLimitsAndANamedHostPortAreSettings) {
  User user;
  auto plain = user.load("one", "p:\n  blocks:\n    stackie.redis: {mode: shared}\n");
  auto limited = user.load(
      "two", "p:\n  blocks:\n    stackie.redis: {mode: shared, limits: {memory: 256MiB}}\n");
  auto moved = user.load(
      "three", "p:\n  blocks:\n    stackie.redis: {mode: shared, serves: {redis: {port: 6380}}}\n");
  auto host_only = user.load(
      "four",
      "p:\n  blocks:\n    stackie.redis: {mode: shared, serves: {redis: {host_port: 7000}}}\n");
  ASSERT_TRUE(plain.ok() && limited.ok() && moved.ok() && host_only.ok());
  ResolvedBlock instance = shared_instance_spec(plain->blocks[0]);
  EXPECT_EQ(shared_difference(instance, limited->blocks[0]), std::optional<std::string>("limits"));
  EXPECT_EQ(shared_difference(instance, moved->blocks[0]),
            std::optional<std::string>("serves.redis"));
  EXPECT_EQ(shared_difference(instance, host_only->blocks[0]),
            std::optional<std::string>("serves.redis.host_port"));
  // Naming the instance's own host port, or none, is the same request.
  auto same_host = user.load(
      "five",
      "p:\n  blocks:\n    stackie.redis: {mode: shared, serves: {redis: {host_port: 6379}}}\n");
  ASSERT_TRUE(same_host.ok());
  EXPECT_EQ(shared_difference(instance, same_host->blocks[0]), std::nullopt);
  EXPECT_EQ(shared_difference(shared_instance_spec(same_host->blocks[0]), plain->blocks[0]),
            std::nullopt);
}

TEST(SharedMode, TheHostPortIsAskedForAsTheInstances) {
  User user;
  LoadOptions options = user.options("one", "p:\n  blocks:\n    stackie.redis: {mode: shared}\n");
  std::vector<HostPortRequest> asked;
  options.allocate_host_port = [&](const HostPortRequest& request) -> Result<HostPortGrant> {
    asked.push_back(request);
    return HostPortGrant{request.wanted, ""};
  };
  ASSERT_TRUE(load_stack(options).ok());
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].stack, "@shared");
  EXPECT_EQ(asked[0].block, "stackie.redis");
  EXPECT_EQ(asked[0].wanted, 6379);
}

TEST(SharedMode, OwnIsTheDefaultAndCanBeWritten) {
  User user;
  auto own = user.load("one", "p:\n  blocks:\n    stackie.redis: {mode: own}\n");
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_EQ(own->blocks[0].shared_instance, "");
  EXPECT_EQ(own->blocks[0].sandbox_id, "p-redis");
  EXPECT_TRUE(own->blocks[0].shared_settings.empty());
}

// The documented form (tests/fixtures/good/documented_shared): the instance is the user's, the
// consumer reaches it as an own block's consumer does.
TEST(SharedMode, TheDocumentedExampleLoadsWithItsMeaning) {
  User user;
  std::string dir = testing::fixtures() + "/good/documented_shared";
  LoadOptions options = user.options("unused", "unused:\n  blocks: {}\n");
  options.file = dir + "/stackie-stack.yml";
  options.cwd = dir;
  options.env["POSTGRES_PASSWORD"] = "pw";
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock* pg = find_block(*stack, "stackie.postgres");
  const ResolvedBlock* api = find_block(*stack, "api");
  ASSERT_NE(pg, nullptr);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(pg->shared_instance, "stackie.postgres");
  EXPECT_EQ(env_value(*pg, "PGDATA"), user.home / "s/storage/volumes/@shared/postgres/data");
  EXPECT_EQ(stack->storage_root, "/srv/shop-storage") << "the stack's own blocks keep its root";
  EXPECT_EQ(env_value(*api, "DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/app");
}

}  // namespace
}  // namespace stackie
