// make_directories on Windows: the private directory is one in the user's profile, whose
// inherited DACL already admits only the user, SYSTEM and Administrators (POSIX's 0700 has no
// better equivalent here). Accepts '/' or '\' separators and a drive prefix ("C:/").
#include <windows.h>

#include <cerrno>

#include "base/directories.h"
#include "base/safe_open.h"
#include "base/windows_text.h"

namespace stackie {

Status make_directories(const std::string& path) {
  if (path.empty() || path == "/" || (path.size() <= 3 && path.size() >= 2 && path[1] == ':'))
    return {};
  std::wstring wide = widen(path);
  DWORD attributes = GetFileAttributesW(wide.c_str());
  if (attributes != INVALID_FILE_ATTRIBUTES) {
    if (attributes & FILE_ATTRIBUTE_DIRECTORY) return {};
    return Error{-ENOTDIR, "cannot create directory " + path + ": not a directory"};
  }
  const std::size_t slash = path.find_last_of("/\\");
  if (slash != std::string::npos && slash > 0) STACKIE_TRY(make_directories(path.substr(0, slash)));
  if (!CreateDirectoryW(wide.c_str(), nullptr) && GetLastError() != ERROR_ALREADY_EXISTS)
    return windows_error("cannot create directory " + path);
  return {};
}

namespace {

// `path` split into its directory (opened as the user's own, trusted) and its last name.
struct ParentAndName {
  UniqueFd parent;
  std::string parent_shown;
  std::string name;
};

Result<ParentAndName> split_parent(const std::string& path) {
  const std::size_t slash = path.find_last_of("/\\");
  if (slash == std::string::npos || slash + 1 == path.size())
    return Error{-EINVAL, path + ": not a path to a file or directory"};
  ParentAndName split;
  split.parent_shown = path.substr(0, slash == 2 && path[1] == ':' ? 3 : slash);
  split.name = path.substr(slash + 1);
  STACKIE_TRY_ASSIGN(parent, open_directory(split.parent_shown));
  split.parent = std::move(parent);
  return split;
}

// Reparse points are skipped. Wine shows a Unix symlink to a directory as a plain directory, so
// there a planted link's target may be counted, and links to their own parents would make the
// walk endless: it stops after `budget` entries in all (a size, not a reason to hang the daemon
// of a `down -v`). It only reads sizes.
uint64_t usage_below(const std::wstring& dir, int depth, uint64_t& budget) {
  if (depth > 64 || budget == 0) return 0;
  WIN32_FIND_DATAW entry;
  HANDLE find = FindFirstFileW((dir + L"\\*").c_str(), &entry);
  if (find == INVALID_HANDLE_VALUE) return 0;
  uint64_t total = 0;
  do {
    if (budget == 0) break;
    --budget;
    std::wstring name = entry.cFileName;
    if (name == L"." || name == L".." || (entry.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT))
      continue;
    if (entry.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
      total += usage_below(dir + L"\\" + name, depth + 1, budget);
    else
      total += (static_cast<uint64_t>(entry.nFileSizeHigh) << 32) | entry.nFileSizeLow;
  } while (FindNextFileW(find, &entry));
  FindClose(find);
  return total;
}

}  // namespace

// Through safe_open's removal, which removes a reparse point (or a link Wine disguises) as
// itself and never what it points to: volumes are block-writable.
Status remove_tree(const std::string& path) {
  STACKIE_TRY_ASSIGN(split, split_parent(path));
  return remove_tree_beneath(split.parent.get(), split.name, split.parent_shown);
}

// File sizes, not allocated clusters: close enough for `volume ls` and cheap to get.
uint64_t disk_usage(const std::string& path) {
  uint64_t budget = 1000000;
  return usage_below(widen(path), 0, budget);
}

Status write_file_atomically(const std::string& path, const std::string& text, int) {
  STACKIE_TRY_ASSIGN(split, split_parent(path));
  return replace_file_in(split.parent.get(), split.name, text, split.parent_shown);
}

}  // namespace stackie
