// make_directories on Windows: the private directory is one in the user's profile, whose
// inherited DACL already admits only the user, SYSTEM and Administrators (POSIX's 0700 has no
// better equivalent here). Accepts '/' or '\' separators and a drive prefix ("C:/").
#include <windows.h>

#include <cerrno>

#include "base/directories.h"
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

}  // namespace stackie
