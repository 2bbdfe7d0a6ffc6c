#include <windows.h>

#include "base/windows_text.h"
#include "stack/file_kind.h"

namespace stackie {

bool is_file_or_directory_itself(const std::string& path) {
  DWORD attributes = GetFileAttributesW(widen(path).c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_REPARSE_POINT) &&
         !(attributes & FILE_ATTRIBUTE_DEVICE);
}

bool is_link(const std::string& path) {
  DWORD attributes = GetFileAttributesW(widen(path).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES || !(attributes & FILE_ATTRIBUTE_REPARSE_POINT))
    return false;
  // Only a reparse point that names another path (a symlink, a junction) leads elsewhere; a
  // cloud file's placeholder (OneDrive) is a reparse point too, and is the file itself.
  WIN32_FIND_DATAW found;
  HANDLE search = FindFirstFileW(widen(path).c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return true;
  FindClose(search);
  return IsReparseTagNameSurrogate(found.dwReserved0);
}

std::optional<FileIdentity> file_identity(const std::string& path) {
  HANDLE file =
      CreateFileW(widen(path).c_str(), FILE_READ_ATTRIBUTES,
                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                  FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (file == INVALID_HANDLE_VALUE) {
    if (is_missing(path)) return std::nullopt;
    return FileIdentity{};
  }
  BY_HANDLE_FILE_INFORMATION info{};
  BOOL ok = GetFileInformationByHandle(file, &info);
  CloseHandle(file);
  if (!ok) return FileIdentity{};
  return FileIdentity{
      info.dwVolumeSerialNumber,
      (static_cast<unsigned long long>(info.nFileIndexHigh) << 32) | info.nFileIndexLow,
      ""};  // the index holds NTFS's sequence number: no handle needed
}

bool is_missing(const std::string& path) {
  if (GetFileAttributesW(widen(path).c_str()) != INVALID_FILE_ATTRIBUTES) return false;
  DWORD code = GetLastError();
  return code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND;
}

// The final path of the opened file (every junction and symlink followed), in Stackie's form
// (base/windows_text.h path_from_final_name).
std::string resolved_path(const std::string& path) {
  HANDLE handle = CreateFileW(widen(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                              OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (handle == INVALID_HANDLE_VALUE) return path;
  wchar_t buffer[32768];
  DWORD n = GetFinalPathNameByHandleW(handle, buffer, sizeof buffer / sizeof buffer[0],
                                      FILE_NAME_NORMALIZED);
  CloseHandle(handle);
  if (n == 0 || n >= sizeof buffer / sizeof buffer[0]) return path;
  return path_from_final_name(std::wstring_view(buffer, n));
}

}  // namespace stackie
