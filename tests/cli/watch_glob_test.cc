#include "cli/watch_glob.h"

#include <gtest/gtest.h>

namespace stackie::cli {
namespace {

TEST(WatchGlob, NamesWithinADirectoryAndDoubleStarAcross) {
  EXPECT_TRUE(glob_matches("src/*.py", "src/app.py"));
  EXPECT_FALSE(glob_matches("src/*.py", "src/lib/app.py")) << "'*' stays within one name";
  EXPECT_TRUE(glob_matches("src/**/*.py", "src/lib/deep/app.py"));
  EXPECT_TRUE(glob_matches("src/**/*.py", "src/app.py")) << "'**' may be no directory at all";
  EXPECT_FALSE(glob_matches("src/**/*.py", "test/app.py"));
  EXPECT_TRUE(glob_matches("app.?s", "app.js"));
  EXPECT_TRUE(glob_matches("[ab].txt", "b.txt"));
}

TEST(WatchGlob, AGlobWithoutSlashMatchesANameAtAnyDepth) {
  EXPECT_TRUE(glob_matches("*.py", "a/b/c.py"));
  EXPECT_TRUE(glob_matches("build", "build/out/x.o")) << "a directory takes what is below it";
  EXPECT_FALSE(glob_matches("*.py", "a/b/c.pyx"));
}

TEST(WatchGlob, ADirectoryGlobTakesEverythingBelowAndDotIsEverything) {
  EXPECT_TRUE(glob_matches("src", "src/a/b.c"));
  EXPECT_TRUE(glob_matches("src/", "src/a/b.c"));
  EXPECT_TRUE(glob_matches("./src", "src/a"));
  EXPECT_FALSE(glob_matches("src/a", "src/ab"));
  EXPECT_TRUE(glob_matches(".", "anything/at/all"));
}

TEST(WatchGlob, CachesVersionControlAndEditorFilesNeverCount) {
  for (const char* path : {".git/index", "a/node_modules/x.js", "pkg/__pycache__/m.cpython.pyc",
                           "m.pyc", "app.py~", ".app.py.swp", ".#app.py", "4913"})
    EXPECT_TRUE(always_ignored(path)) << path;
  EXPECT_FALSE(always_ignored("src/app.py"));
  EXPECT_FALSE(always_ignored("gitignore.md"));
}

TEST(WatchGlob, IgnoreWinsOverPaths) {
  std::vector<std::string> paths = {"src", "app.py"};
  std::vector<std::string> ignore = {"src/generated/**", "*.log"};
  EXPECT_TRUE(watch_wants(paths, ignore, "src/main.py"));
  EXPECT_TRUE(watch_wants(paths, ignore, "app.py"));
  EXPECT_FALSE(watch_wants(paths, ignore, "README.md"));
  EXPECT_FALSE(watch_wants(paths, ignore, "src/generated/x.py"));
  EXPECT_FALSE(watch_wants(paths, ignore, "src/run.log"));
  EXPECT_FALSE(watch_wants(paths, ignore, "src/.main.py.swp"));
}

}  // namespace
}  // namespace stackie::cli
