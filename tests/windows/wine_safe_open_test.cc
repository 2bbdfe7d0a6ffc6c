// base/safe_open_windows.cc against a hostile block's plants in its storage, for real under
// Wine: Unix symlinks (safe_open_plants.sh makes them; Wine opens their targets and flags no
// reparse point), and the Windows plants this Wine can make (a symlink by CreateSymbolicLinkW,
// a junction by FSCTL_SET_REPARSE_POINT; a case is skipped, saying so, when Wine refuses to make
// it). Every lookup through a plant must be refused naming it, and remove_tree_beneath must
// remove a reparse point itself and refuse a Unix symlink, never touching what either points to.
//   stackie-wine-safe-open-test.exe DIR (DIR/storage, DIR/outside: see safe_open_plants.sh)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <winioctl.h>
// windows.h first.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <io.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "base/safe_open.h"
#include "base/windows_text.h"
#include "windows/plant_dir.h"

namespace stackie {
namespace {

using wine::contents;
using wine::exists;
const std::string& g_dir = wine::g_plant_dir;

std::string storage() {
  return g_dir + "/storage";
}
std::string outside() {
  return g_dir + "/outside";
}

UniqueFd root() {
  auto fd = open_storage_root(storage(), Privacy::owned);
  EXPECT_TRUE(fd.ok()) << (fd.ok() ? "" : fd.error().message);
  return fd.ok() ? std::move(*fd) : UniqueFd();
}

// remove_tree_beneath on the link `name` in storage/: a reparse point is removed as itself; a
// Unix symlink, which Wine opens as its target, is refused naming it (deleting through that
// handle would delete the target). Either way what it points to stays.
void expect_link_removed_or_refused(int dir, const std::string& name) {
  std::string shown = storage() + "/" + name;
  Status removed = remove_tree_beneath(dir, name, storage());
  if (removed.ok())
    EXPECT_FALSE(exists(shown)) << "the link itself is removed";
  else
    EXPECT_NE(removed.error().message.find(shown + ": is a link this system cannot remove"),
              std::string::npos)
        << removed.error().message;
}

// Every lookup through the link `name` (a directory link to outside/dir, in storage/) refused
// naming it, and removing it leaves outside/dir/keep.txt.
void expect_directory_link_refused(const std::string& name, bool removable) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  std::string shown = storage() + "/" + name;

  auto read = open_beneath(dir.get(), name + "/keep.txt", O_RDONLY, storage());
  ASSERT_FALSE(read.ok()) << "read through " << shown;
  EXPECT_NE(read.error().message.find(shown + ": is a symbolic link or junction"),
            std::string::npos)
      << read.error().message;

  auto made = make_directories_beneath(dir.get(), name + "/planted", storage());
  ASSERT_FALSE(made.ok()) << "mkdir through " << shown;
  EXPECT_NE(made.error().message.find(shown + ":"), std::string::npos) << made.error().message;
  EXPECT_FALSE(exists(outside() + "/dir/planted"));

  auto file = open_file_in(dir.get(), name, O_WRONLY | O_APPEND | O_CREAT, storage());
  EXPECT_FALSE(file.ok()) << "open_file_in on " << shown;

  expect_link_removed_or_refused(dir.get(), name);
  EXPECT_EQ(exists(shown), !removable) << "a reparse point is removed, a Unix symlink is not";
  EXPECT_EQ(contents(outside() + "/dir/keep.txt"), "keep me\n") << "what it points to stays";
}

TEST(WineSafeOpen, PlainTreeWorks) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  auto made = make_directories_beneath(dir.get(), "plain/logs", storage());
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto file = open_file_in(made->get(), "out.log", O_WRONLY | O_APPEND | O_CREAT,
                           storage() + "/plain/logs");
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_EQ(::_write(file->get(), "line\n", 5), 5);
  file = UniqueFd();
  made = UniqueFd();  // an open directory cannot go (Windows deletes it at its last close)
  EXPECT_EQ(contents(storage() + "/plain/logs/out.log"), "line\n") << "written in binary mode";
  auto read = open_beneath(dir.get(), "plain/logs/out.log", O_RDONLY, storage());
  ASSERT_TRUE(read.ok()) << read.error().message;
  read = UniqueFd();
  Status removed = remove_tree_beneath(dir.get(), "plain", storage());
  EXPECT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_FALSE(exists(storage() + "/plain"));
  EXPECT_TRUE(remove_tree_beneath(dir.get(), "plain", storage()).ok()) << "missing is no error";
}

// A secret such as the API token (issue 18) is refused when its DACL lets anyone else read it.
// Wine keeps no DACL on a file and shows one made from its Unix mode, where "others may read"
// (this test's umask 022) is an Everyone ACE: that is the DACL refused here. (That
// make_private_file's DACL is kept and then accepted cannot be shown under Wine.)
TEST(WineSafeOpen, PrivateFileRefusedWhenOthersMayReadIt) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  std::string shown = storage() + "/secret.token";
  auto file = open_file_in(dir.get(), "secret.token", O_WRONLY | O_CREAT | O_EXCL, storage());
  ASSERT_TRUE(file.ok()) << file.error().message;
  Status checked = check_private_file(file->get(), shown);
  ASSERT_FALSE(checked.ok()) << "a file Everyone may read is refused";
  EXPECT_NE(checked.error().message.find(shown + ": others may read it"), std::string::npos)
      << checked.error().message;
  EXPECT_NE(checked.error().message.find("S-1-1-0"), std::string::npos) << checked.error().message;
}

TEST(WineSafeOpen, ClimbingAbsoluteAndStreamPathsRefused) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  for (const char* path :
       {"../outside/secret.txt", "sub/../../outside/secret.txt", "/outside/secret.txt", "\\outside",
        "C:/Windows", "sub:stream", "sub\\..\\..\\outside\\secret.txt"}) {
    auto opened = open_beneath(dir.get(), path, O_RDONLY, storage());
    ASSERT_FALSE(opened.ok()) << path;
    EXPECT_NE(opened.error().message.find("not a plain path"), std::string::npos)
        << opened.error().message;
  }
  EXPECT_FALSE(open_file_in(dir.get(), "..", O_RDONLY, storage()).ok());
  EXPECT_FALSE(open_file_in(dir.get(), "sub/x", O_RDONLY, storage()).ok());
}

TEST(WineSafeOpen, UnixDirectorySymlinkRefused) {
  expect_directory_link_refused("linkdir", false);
}

TEST(WineSafeOpen, UnixSymlinkDeeperRefusedNamingIt) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  auto read = open_beneath(dir.get(), "sub/linkdir/keep.txt", O_RDONLY, storage());
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find(storage() + "/sub/linkdir: is a symbolic link"),
            std::string::npos)
      << read.error().message;
}

TEST(WineSafeOpen, UnixFileSymlinkNeitherWrittenNorRemovedThrough) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  auto file = open_file_in(dir.get(), "linkfile", O_WRONLY | O_APPEND | O_CREAT, storage());
  ASSERT_FALSE(file.ok()) << "a log file planted as a link is written through";
  EXPECT_NE(file.error().message.find(storage() + "/linkfile: is a symbolic link"),
            std::string::npos)
      << file.error().message;
  EXPECT_FALSE(open_beneath(dir.get(), "linkfile", O_RDONLY, storage()).ok());
  expect_link_removed_or_refused(dir.get(), "linkfile");
  EXPECT_EQ(contents(outside() + "/secret.txt"), "the-users-secret\n");
}

// A dangling link where a log belongs: creating the log must not create its target.
TEST(WineSafeOpen, DanglingSymlinkCreatesNothing) {
  UniqueFd dir = root();
  ASSERT_TRUE(dir.valid());
  auto file = open_file_in(dir.get(), "dangling", O_WRONLY | O_APPEND | O_CREAT, storage());
  EXPECT_FALSE(file.ok()) << "a log created through a dangling link";
  EXPECT_FALSE(exists(outside() + "/created.txt")) << "the link's target was created";
  auto made = make_directories_beneath(dir.get(), "dangling/sub", storage());
  EXPECT_FALSE(made.ok());
  EXPECT_FALSE(exists(outside() + "/created.txt"));
}

// The calls state files and logs make on names in a directory: a file written, synced, renamed
// over another; a link neither renamed nor removed through (Wine would act on its target).
TEST(WineSafeOpen, RenameAndRemoveInDirectory) {
  auto dir = open_directory(storage());
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  for (const char* text : {"first\n", "second\n"}) {
    // O_APPEND as a log's: after the truncation the write lands at 0, not where it was.
    auto file =
        open_file_in(dir->get(), "state.tmp", O_WRONLY | O_CREAT | O_EXCL | O_APPEND, storage());
    ASSERT_TRUE(file.ok()) << file.error().message;
    ASSERT_TRUE(write_and_sync(file->get(), text, "state.tmp").ok());
    EXPECT_EQ(file_size(file->get()), std::strlen(text));
    EXPECT_TRUE(still_named_in(file->get(), dir->get(), "state.tmp"));
    Status renamed = rename_in(dir->get(), "state.tmp", "state.json", storage());
    ASSERT_TRUE(renamed.ok()) << renamed.error().message;
    EXPECT_FALSE(still_named_in(file->get(), dir->get(), "state.tmp")) << "renamed away";
    EXPECT_TRUE(still_named_in(file->get(), dir->get(), "state.json"));
    ASSERT_TRUE(truncate_open_file(file->get(), "state.json").ok());
    EXPECT_EQ(file_size(file->get()), 0u);
    ASSERT_TRUE(write_and_sync(file->get(), text, "state.json").ok());
  }
  EXPECT_EQ(contents(storage() + "/state.json"), "second\n") << "the rename replaced the first";
  EXPECT_FALSE(exists(storage() + "/state.tmp"));

  Status moved = rename_in(dir->get(), "linkfile", "moved", storage());
  EXPECT_FALSE(moved.ok()) << "a Unix symlink renamed through its target";
  Status removed = remove_file_in(dir->get(), "linkfile", storage());
  EXPECT_FALSE(removed.ok()) << "a Unix symlink removed through its target";
  EXPECT_EQ(contents(outside() + "/secret.txt"), "the-users-secret\n");
  EXPECT_FALSE(exists(storage() + "/moved"));
  EXPECT_FALSE(rename_in(dir->get(), "state.json", "../escaped", storage()).ok());

  EXPECT_TRUE(remove_file_in(dir->get(), "state.json", storage()).ok());
  EXPECT_FALSE(exists(storage() + "/state.json"));
  EXPECT_TRUE(remove_file_in(dir->get(), "state.json", storage()).ok()) << "missing is no error";
  EXPECT_TRUE(directory_still_there(dir->get()));
}

TEST(WineSafeOpen, WindowsSymlinkRefused) {
  std::wstring link = widen(storage() + "/winlink"), target = widen(outside() + "/dir");
  for (auto& c : link)
    if (c == L'/') c = L'\\';
  for (auto& c : target)
    if (c == L'/') c = L'\\';
  if (!CreateSymbolicLinkW(
          link.c_str(), target.c_str(),
          SYMBOLIC_LINK_FLAG_DIRECTORY | SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE) ||
      !exists(storage() + "/winlink"))
    GTEST_SKIP() << "this Wine cannot make a symbolic link (CreateSymbolicLinkW: error "
                 << GetLastError() << "); the Unix symlink cases stand in for it";
  expect_directory_link_refused("winlink", true);
}

// A mount-point reparse buffer (REPARSE_DATA_BUFFER is in the DDK headers, not windows.h).
struct MountPointBuffer {
  DWORD tag;
  WORD data_length;
  WORD reserved;
  WORD substitute_offset, substitute_length, print_offset, print_length;
  wchar_t path[1024];
};

TEST(WineSafeOpen, JunctionRefused) {
  std::string junction = storage() + "/junction";
  ASSERT_TRUE(CreateDirectoryW(widen(junction).c_str(), nullptr));
  HANDLE handle = CreateFileW(widen(junction).c_str(), GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                              FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  ASSERT_NE(handle, INVALID_HANDLE_VALUE);
  std::wstring target = L"\\??\\" + widen(outside() + "/dir");
  for (auto& c : target)
    if (c == L'/') c = L'\\';
  MountPointBuffer buffer{};
  buffer.tag = IO_REPARSE_TAG_MOUNT_POINT;
  buffer.substitute_length = static_cast<WORD>(target.size() * sizeof(wchar_t));
  buffer.print_offset = static_cast<WORD>(buffer.substitute_length + sizeof(wchar_t));
  std::memcpy(buffer.path, target.data(), buffer.substitute_length);
  buffer.data_length = static_cast<WORD>(8 + buffer.print_offset + sizeof(wchar_t));
  DWORD got = 0;
  bool made = DeviceIoControl(handle, FSCTL_SET_REPARSE_POINT, &buffer, 8 + buffer.data_length,
                              nullptr, 0, &got, nullptr);
  DWORD error = GetLastError();
  CloseHandle(handle);
  DWORD attributes = GetFileAttributesW(widen(junction).c_str());
  if (!made || !(attributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
    RemoveDirectoryW(widen(junction).c_str());
    GTEST_SKIP() << "this Wine cannot make a junction (FSCTL_SET_REPARSE_POINT: error " << error
                 << "); the Unix symlink cases stand in for it";
  }
  expect_directory_link_refused("junction", true);
}

// Not safe_open's, but base's too (base/windows_text.h): the final paths that the loader's
// checks compare (stack/file_kind_windows.cc resolved_path) keep a share absolute. Dropping
// "\\?\" alone made "\\?\UNC\srv\share\p" the relative "UNC/srv/share/p".
TEST(WindowsText, AFinalPathOnAShareStaysAbsolute) {
  EXPECT_EQ(path_from_final_name(L"\\\\?\\C:\\Users\\dev\\app"), "C:/Users/dev/app");
  EXPECT_EQ(path_from_final_name(L"\\\\?\\UNC\\srv\\share\\app\\.env"), "//srv/share/app/.env");
  EXPECT_EQ(path_from_final_name(L"C:\\plain"), "C:/plain");
  EXPECT_EQ(path_from_final_name(L"\\\\?\\UNCLE\\x"), "UNCLE/x");
}

}  // namespace
}  // namespace stackie

int main(int argc, char** argv) {
  return stackie::wine::run_in_plant_dir(argc, argv, "safe_open_plants.sh");
}
