// The daemon's own files on Windows, for real under Wine: the state file (written to a temp
// file, synced, renamed over the old one) and a block's rotating log, both through
// base/safe_open.h. A Unix symlink planted where either belongs (storage_files_plants.sh) must
// be refused, never read or written through.
//   stackie-wine-storage-files-test.exe DIR (DIR/home, DIR/logs, DIR/outside)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// windows.h first.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/safe_open.h"
#include "base/windows_text.h"
#include "supervisor/block_logs.h"
#include "supervisor/host_os.h"
#include "supervisor/state_file.h"
#include "windows/plant_dir.h"

namespace stackie {
namespace {

using wine::contents;
using wine::exists;
const std::string& g_dir = wine::g_plant_dir;

StackRecord record(const std::string& name) {
  StackRecord out;
  out.name = name;
  out.request.file = "C:/projects/" + name + "/stackie.yaml";
  out.request.cwd = "C:/projects/" + name;
  out.request.env = {{"STACKIE_X", "1"}};
  return out;
}

TEST(WineStorageFiles, StateFileWrittenReplacedAndRead) {
  std::string path = g_dir + "/home/state.json";
  auto missing = read_state_file(path);
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_TRUE(missing->empty());
  ASSERT_TRUE(write_state_file(path, {record("a")}).ok());
  Status again = write_state_file(path, {record("a"), record("b")});
  ASSERT_TRUE(again.ok()) << again.error().message;
  auto read = read_state_file(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1], record("b"));
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST(WineStorageFiles, PlantedStateFileRefused) {
  auto read = read_state_file(g_dir + "/home/planted.json");
  ASSERT_FALSE(read.ok()) << "read through a link";
  EXPECT_NE(read.error().message.find("planted.json: is a symbolic link"), std::string::npos)
      << read.error().message;
  EXPECT_EQ(contents(g_dir + "/outside/secret.txt"), "the-users-secret\n");
}

TEST(WineStorageFiles, LogRotatesInItsDirectory) {
  std::string logs = g_dir + "/logs";
  {
    RotatingFile file(logs + "/stdout.log", 12, 3);
    for (const char* line : {"one 1234\n", "two 1234\n", "three 12\n", "four 123\n"}) {
      Status appended = file.append(line);
      ASSERT_TRUE(appended.ok()) << appended.error().message;
    }
  }
  EXPECT_EQ(contents(logs + "/stdout.log"), "four 123\n");
  EXPECT_EQ(contents(logs + "/stdout.log.1"), "three 12\n");
  EXPECT_EQ(contents(logs + "/stdout.log.2"), "two 1234\n") << "the oldest fell off";
  {
    RotatingFile single(logs + "/single.log", 12, 1);
    ASSERT_TRUE(single.append("one 1234\n").ok());
    ASSERT_TRUE(single.append("two 1234\n").ok());
  }
  EXPECT_EQ(contents(logs + "/single.log"), "two 1234\n") << "truncated in place";
}

TEST(WineStorageFiles, PlantedLogFileRefused) {
  RotatingFile file(g_dir + "/logs/stderr.log", 1024, 3);
  Status appended = file.append("written through the link\n");
  ASSERT_FALSE(appended.ok()) << "a log line written through a link";
  EXPECT_NE(appended.error().message.find("stderr.log: is a symbolic link"), std::string::npos)
      << appended.error().message;
  EXPECT_EQ(contents(g_dir + "/outside/secret.txt"), "the-users-secret\n");
}

// The daemon's single-instance lock (LockFileEx): a second holder is refused as busy until the
// first closes its file.
TEST(WineStorageFiles, InstanceLockIsExclusive) {
  std::string home = g_dir + "/home";
  auto dir = open_directory(home);
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  auto first = open_file_in(dir->get(), "stackied.lock", O_RDWR | O_CREAT, home);
  auto second = open_file_in(dir->get(), "stackied.lock", O_RDWR | O_CREAT, home);
  ASSERT_TRUE(first.ok() && second.ok());
  Status taken = lock_instance(first->get(), "stackied.lock");
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  Status refused = lock_instance(second->get(), "stackied.lock");
  ASSERT_FALSE(refused.ok()) << "two holders of the instance lock";
  EXPECT_EQ(refused.error().code, UV_EBUSY) << refused.error().message;
  *first = UniqueFd();
  Status after = lock_instance(second->get(), "stackied.lock");
  EXPECT_TRUE(after.ok()) << "the lock is dropped with its file: "
                          << (after.ok() ? "" : after.error().message);
}

}  // namespace
}  // namespace stackie

int main(int argc, char** argv) {
  return stackie::wine::run_in_plant_dir(argc, argv, "storage_files_plants.sh");
}
