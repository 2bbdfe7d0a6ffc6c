// The catalog as `stackie blocks` sees it: aliases followed once, programs found or the install
// hint per OS, search terms, and every shipped definition loading.
#include "stack/catalog_entry.h"

#include <gtest/gtest.h>

#include "stack/catalog.h"
#include "stack/loader.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::TempDir;

std::vector<std::string> shipped() {
  return {testing::source_root() + "/share/stackie/blocks"};
}

TEST(CatalogEntry, EveryShippedBlockLoadsWithDescriptionPortsAndPackages) {
  auto names = catalog_names(shipped());
  ASSERT_GE(names.size(), 4u);  // postgres, redis, mariadb, mysql
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    auto entry = describe_catalog_block(name, shipped(), {{}, "linux", "/nonexistent"});
    ASSERT_TRUE(entry.ok()) << entry.error().message;
    EXPECT_FALSE(entry->def.description.empty());
    EXPECT_FALSE(entry->def.serves.empty());
    EXPECT_FALSE(entry->def.programs.empty());
    for (const auto& program : entry->def.programs) {
      EXPECT_TRUE(program.packages.count("apt")) << program.name;
      EXPECT_TRUE(program.packages.count("brew")) << program.name;
    }
  }
}

TEST(CatalogEntry, MysqlIsMariadbUnderItsOwnName) {
  auto entry = describe_catalog_block("stackie.mysql", shipped(), {{}, "linux", "/nonexistent"});
  ASSERT_TRUE(entry.ok()) << entry.error().message;
  EXPECT_EQ(entry->name, "stackie.mysql");
  EXPECT_EQ(entry->alias_of, "stackie.mariadb");
  EXPECT_EQ(entry->def.name, "stackie.mariadb");
  EXPECT_NE(entry->def.file.find("stackie.mariadb.yml"), std::string::npos);
}

TEST(CatalogEntry, ProgramsFoundOrTheInstallHintOfThisOs) {
  TempDir root;
  root.program("usr/sbin/mariadbd");
  root.program("usr/bin/mariadb-install-db");
  auto entry = describe_catalog_block("stackie.mariadb", shipped(), {{}, "linux", root.path()});
  ASSERT_TRUE(entry.ok()) << entry.error().message;
  ASSERT_EQ(entry->programs.size(), 3u);
  EXPECT_EQ(entry->programs[0].path, root / "usr/sbin/mariadbd");
  EXPECT_EQ(entry->programs[1].path, root / "usr/bin/mariadb-install-db");
  EXPECT_EQ(entry->programs[2].path, "");
  EXPECT_EQ(entry->programs[2].install_hint, "apt-get install mariadb-client");
  EXPECT_FALSE(entry->ready());
  root.program("usr/bin/mysqladmin");  // the older name counts
  entry = describe_catalog_block("stackie.mariadb", shipped(), {{}, "linux", root.path()});
  ASSERT_TRUE(entry.ok());
  EXPECT_TRUE(entry->ready());
  entry = describe_catalog_block("stackie.mariadb", shipped(), {{}, "macos", root.path()});
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->programs[0].install_hint, "brew install mariadb");
  entry = describe_catalog_block("stackie.mariadb", shipped(), {{}, "windows", root.path()});
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->programs[0].install_hint, "winget install MariaDB.Server");
}

TEST(CatalogEntry, SearchIsCaseInsensitiveOverNameAliasAndDescription) {
  ProgramHost host{{}, "linux", "/nonexistent"};
  auto mysql = describe_catalog_block("stackie.mysql", shipped(), host);
  auto redis = describe_catalog_block("stackie.redis", shipped(), host);
  ASSERT_TRUE(mysql.ok() && redis.ok());
  EXPECT_TRUE(catalog_entry_matches(*mysql, "MariaDB"));  // the alias target
  EXPECT_TRUE(catalog_entry_matches(*mysql, "mysql"));
  EXPECT_TRUE(catalog_entry_matches(*redis, "IN-MEMORY"));  // the description
  EXPECT_FALSE(catalog_entry_matches(*redis, "mysql"));
}

TEST(CatalogEntryBadInput, AliasesAndUnknownNames) {
  TempDir dir;
  dir.write("x.a.yml", "x.a:\n  alias: x.b\n");
  dir.write("x.b.yml", "x.b:\n  alias: x.c\n");
  dir.write("x.c.yml", "x.c:\n  command: [true]\n");
  dir.write("x.d.yml", "x.d:\n  alias: x.none\n");
  dir.write("x.e.yml", "x.e:\n  alias: x.c\n  command: [true]\n");
  dir.write("x.f.yml", "x.f:\n  alias: x.f\n");
  std::vector<std::string> dirs = {dir.path()};
  auto chained = load_catalog_def("x.a", dirs);
  ASSERT_FALSE(chained.ok());
  EXPECT_EQ(
      chained.error().message,
      dir / "x.b.yml" + ":1:1: 'x.b' is an alias too (of 'x.c'); an alias must name a definition");
  auto dangling = load_catalog_def("x.d", dirs);
  ASSERT_FALSE(dangling.ok());
  EXPECT_EQ(
      dangling.error().message,
      dir / "x.d.yml" + ":1:1: 'x.d' is an alias of 'x.none', which is not in the block catalog");
  auto mixed = load_catalog_def("x.e", dirs);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("x.e.yml:3:3: "), std::string::npos)
      << mixed.error().message;
  EXPECT_NE(mixed.error().message.find("an alias holds nothing else"), std::string::npos);
  auto self = load_catalog_def("x.f", dirs);
  ASSERT_FALSE(self.ok());
  EXPECT_EQ(self.error().message, dir / "x.f.yml" + ":2:10: block 'x.f' is an alias of itself");
  auto unknown = load_catalog_def("x.cc", dirs);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "unknown block 'x.cc': not in the block catalog; did you mean 'x.c'?");
  auto direct = load_catalog_def("x.b", dirs);  // x.b -> x.c is one hop: fine
  ASSERT_TRUE(direct.ok()) << direct.error().message;
  EXPECT_EQ(direct->name, "x.c");
}

TEST(CatalogEntry, AStackUsesAnAliasUnderItsOwnSandboxAndVolume) {
  TempDir home;
  TempDir root;
  for (const char* program :
       {"usr/sbin/mariadbd", "usr/bin/mariadb-install-db", "usr/bin/mariadb-admin", "usr/bin/sh"})
    root.program(program);
  LoadOptions options;
  options.cwd = home.path();
  options.env = {{"HOME", home.path()},
                 {"STACKIE_HOME", home / "stackie"},
                 {"PATH", "/none"},
                 {"MARIADB_ROOT_PASSWORD", "r"},
                 {"MARIADB_PASSWORD", "p"}};
  options.block_path = shipped();
  options.shipped_block_path = shipped();
  options.os = "linux";
  options.program_root = root.path();
  options.file = home.write("s.yml", "shop:\n  blocks:\n    stackie.mysql:\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  ASSERT_EQ(stack->blocks.size(), 1u);
  EXPECT_EQ(stack->blocks[0].name, "stackie.mysql");
  EXPECT_EQ(stack->blocks[0].sandbox_id, "shop-mysql");
  EXPECT_NE(stack->blocks[0].definition_file.find("stackie.mariadb.yml"), std::string::npos);
}

// `stackie.postgres: {version: "15"}` against postgres 9.6, 15 and 16 installed the Debian way.
TEST(CatalogVersion, PicksTheMajorVersionAskedForOrSaysWhatIsInstalled) {
  TempDir home;
  TempDir root;
  for (const char* version : {"9.6", "15", "16"})
    for (const char* program : {"postgres", "initdb", "pg_isready"})
      root.program(std::string("usr/lib/postgresql/") + version + "/bin/" + program);
  root.program("usr/bin/sh");
  LoadOptions options;
  options.cwd = home.path();
  options.env = {{"HOME", home.path()},
                 {"STACKIE_HOME", home / "stackie"},
                 {"PATH", "/none"},
                 {"POSTGRES_PASSWORD", "pw"}};
  options.block_path = shipped();
  options.shipped_block_path = shipped();
  options.os = "linux";
  options.program_root = root.path();
  auto load = [&](const std::string& version) {
    options.file = home.write(
        "s.yml", "shop:\n  blocks:\n    stackie.postgres:\n      version: " + version + "\n");
    return load_stack(options);
  };
  for (const auto& [asked, dir] : std::vector<std::pair<std::string, std::string>>{
           {"15", "15"}, {"\"9.6\"", "9.6"}, {"9", "9.6"}, {"16", "16"}}) {
    auto stack = load(asked);
    ASSERT_TRUE(stack.ok()) << stack.error().message;
    for (const auto& [name, path] : stack->blocks[0].programs)
      EXPECT_EQ(path, root / ("usr/lib/postgresql/" + dir + "/bin/" + name)) << asked;
  }
  auto missing = load("14");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            options.file +
                ":4:16: stackie.postgres: version 14 of 'postgres' not found (installed: 16, 15, "
                "9.6); install it with: apt-get install postgresql-14");
  options.os = "macos";
  EXPECT_NE(load("14").error().message.find("brew install postgresql@14"), std::string::npos);
  options.os = "linux";
  EXPECT_FALSE(load("1").ok());  // "1" is not a prefix of "15" or "16": whole components only
  options.file =
      home.write("r.yml", "shop:\n  blocks:\n    stackie.redis:\n      version: \"7\"\n");
  auto redis = load_stack(options);
  ASSERT_FALSE(redis.ok());
  EXPECT_EQ(redis.error().message,
            options.file +
                ":4:16: stackie.redis cannot choose a version: its programs are not "
                "found in versioned directories");
}

}  // namespace
}  // namespace stackie
