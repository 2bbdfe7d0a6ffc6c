#include "stack/programs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "test_support.h"

namespace stackie {
namespace {

TEST(Programs, VersionAwareOrder) {
  EXPECT_TRUE(version_less("9.6", "10"));
  EXPECT_TRUE(version_less("/usr/lib/postgresql/9/bin", "/usr/lib/postgresql/15/bin"));
  EXPECT_TRUE(version_less("15", "15.1"));
  EXPECT_FALSE(version_less("16", "15"));
  EXPECT_FALSE(version_less("15", "15"));
  EXPECT_TRUE(version_less("postgresql@9", "postgresql@14"));
}

TEST(Programs, NewestGlobMatchWins) {
  testing::TempDir root;
  for (const char* version : {"9.6", "15", "16", "12"})
    root.program(std::string("usr/lib/postgresql/") + version + "/bin/initdb");
  // 17 has no initdb: a directory without the program is skipped.
  std::filesystem::create_directories(root / "usr/lib/postgresql/17/bin");
  FoundProgram found =
      find_program({{"initdb"}, {"/usr/lib/postgresql/*/bin"}, {}, root.path(), {}});
  EXPECT_EQ(found.path, root / "usr/lib/postgresql/16/bin/initdb");
  EXPECT_EQ(found.dir, root / "usr/lib/postgresql/16/bin");
}

TEST(Programs, GlobsBeforePathThenPath) {
  testing::TempDir root;
  root.program("bin/redis-server");
  root.program("opt/redis/bin/redis-server");
  FoundProgram from_glob =
      find_program({{"redis-server"}, {"/opt/*/bin"}, {root / "bin"}, root.path(), {}});
  EXPECT_EQ(from_glob.path, root / "opt/redis/bin/redis-server");
  FoundProgram from_path =
      find_program({{"redis-server"}, {"/nowhere/*"}, {root / "bin"}, root.path(), {}});
  EXPECT_EQ(from_path.path, root / "bin/redis-server");
  EXPECT_TRUE(find_program({{"redis-server"}, {}, {}, root.path(), {}}).path.empty());
}

TEST(Programs, NotExecutableIsNotFound) {
  testing::TempDir root;
  root.write("bin/tool", "not a program", false);
  EXPECT_TRUE(find_program({{"tool"}, {}, {root / "bin"}, "", {}}).path.empty());
  root.program("bin2/tool");
  EXPECT_EQ(find_program({{"tool"}, {}, {root / "bin", root / "bin2"}, "", {}}).path,
            root / "bin2/tool");
}

TEST(Programs, SymlinksKeepTheirNameAndExposeTheTarget) {
  testing::TempDir root;
  root.program("lib/redis/redis-check-rdb");
  std::filesystem::create_directories(root / "bin");
  ASSERT_EQ(
      ::symlink((root / "lib/redis/redis-check-rdb").c_str(), (root / "bin/redis-server").c_str()),
      0);
  FoundProgram found = find_program({{"redis-server"}, {}, {root / "bin"}, "", {}});
  EXPECT_EQ(found.path, root / "bin/redis-server");
  EXPECT_EQ(found.dir, root / "bin");
  EXPECT_EQ(found.real_dir, std::filesystem::canonical(root / "lib/redis").string());
}

TEST(Programs, UsualDirectoriesComeAfterPath) {
  testing::TempDir root;
  root.program("usr/bin/redis-server");
  root.program("opt/homebrew/bin/redis-server");
  root.program("home/dev/bin/redis-server");
  // No PATH at all (a daemon started by launchd or systemd): the usual places still find it.
  FoundProgram usual =
      find_program({{"redis-server"}, {}, {}, root.path(), usual_program_dirs("macos")});
  EXPECT_EQ(usual.path, root / "opt/homebrew/bin/redis-server");  // Homebrew before /usr/bin
  // PATH first: the caller's choice wins over the usual places.
  FoundProgram from_path = find_program(
      {{"redis-server"}, {}, {root / "home/dev/bin"}, root.path(), usual_program_dirs("linux")});
  EXPECT_EQ(from_path.path, root / "home/dev/bin/redis-server");
  FoundProgram linux_usual =
      find_program({{"redis-server"}, {}, {}, root.path(), usual_program_dirs("linux")});
  EXPECT_EQ(linux_usual.path, root / "usr/bin/redis-server");
  EXPECT_TRUE(find_program({{"redis-server"}, {}, {}, root.path(), usual_program_dirs("windows")})
                  .path.empty());
}

TEST(Programs, NewestAcrossSeveralMajorVersionsOfEachLayout) {
  // Homebrew keeps one keg per major version; the newest keg with the program wins, and a keg
  // that lacks it (a client-only install) is skipped for that program only.
  testing::TempDir root;
  root.program("opt/homebrew/opt/postgresql@14/bin/postgres");
  root.program("opt/homebrew/opt/postgresql@16/bin/postgres");
  root.program("opt/homebrew/opt/postgresql@17/bin/psql");
  std::vector<std::string> globs{"/opt/homebrew/opt/postgresql@*/bin"};
  EXPECT_EQ(find_program({{"postgres"}, globs, {}, root.path(), {}}).path,
            root / "opt/homebrew/opt/postgresql@16/bin/postgres");
  EXPECT_EQ(find_program({{"psql"}, globs, {}, root.path(), {}}).path,
            root / "opt/homebrew/opt/postgresql@17/bin/psql");
}

TEST(Programs, OnlyAbsoluteGlobsOfThisOs) {
  std::vector<std::string> globs{"/usr/lib/postgresql/*/bin", "C:/Program Files/PostgreSQL/*/bin",
                                 "relative/bin", "D:\\Tools"};
  EXPECT_EQ(globs_for_os(globs, "linux"), (std::vector<std::string>{"/usr/lib/postgresql/*/bin"}));
  EXPECT_EQ(globs_for_os(globs, "macos"), (std::vector<std::string>{"/usr/lib/postgresql/*/bin"}));
  EXPECT_EQ(globs_for_os(globs, "windows"),
            (std::vector<std::string>{"C:/Program Files/PostgreSQL/*/bin", "D:\\Tools"}));
}

TEST(Programs, InstallHintPerOs) {
  std::map<std::string, std::string> packages{{"apt", "postgresql"}, {"brew", "postgresql@16"}};
  EXPECT_EQ(install_hint(packages, "linux"), "apt-get install postgresql");
  EXPECT_EQ(install_hint(packages, "macos"), "brew install postgresql@16");
  EXPECT_EQ(install_hint(packages, "windows"), "");
  packages["winget"] = "PostgreSQL.PostgreSQL.16";
  EXPECT_EQ(install_hint(packages, "windows"), "winget install PostgreSQL.PostgreSQL.16");
  EXPECT_EQ(split_search_path("/a::/b:"), (std::vector<std::string>{"/a", "/b"}));
}

}  // namespace
}  // namespace stackie
