// Finding programs on Windows. A glob may have wildcards in its last component only
// ("C:/Program Files/PostgreSQL/*/bin" is not supported yet; "C:/tools/pg-*" is): FindFirstFileW
// matches one directory level.
#include <windows.h>

#include <algorithm>

#include "base/windows_text.h"
#include "stack/programs.h"
#include "stack/programs_os.h"

namespace stackie {

bool is_executable_file(const std::string& path) {
  DWORD attributes = GetFileAttributesW(widen(path).c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

std::vector<std::string> expand_glob(const std::string& pattern) {
  std::vector<std::string> out;
  const size_t slash = pattern.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : pattern.substr(0, slash + 1);
  if (dir.find_first_of("*?") != std::string::npos) return out;
  WIN32_FIND_DATAW found{};
  HANDLE search = FindFirstFileW(widen(pattern).c_str(), &found);
  if (search == INVALID_HANDLE_VALUE) return out;
  do {
    std::string name = narrow(found.cFileName);
    if ((found.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) && name != "." && name != "..")
      out.push_back(dir + name);
  } while (FindNextFileW(search, &found));
  FindClose(search);
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return version_less(b, a); });
  return out;
}

std::string real_path(const std::string& path) {
  HANDLE file = CreateFileW(widen(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                            OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (file == INVALID_HANDLE_VALUE) return path;
  std::wstring buffer(1024, L'\0');
  DWORD n = GetFinalPathNameByHandleW(file, buffer.data(), static_cast<DWORD>(buffer.size()),
                                      FILE_NAME_NORMALIZED);
  CloseHandle(file);
  if (n == 0 || n >= buffer.size()) return path;
  return path_from_final_name(std::wstring_view(buffer.data(), n));
}

char search_path_separator() {
  return ';';
}

}  // namespace stackie
