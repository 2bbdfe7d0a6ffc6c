// executable_path() on Windows: GetModuleFileNameW, in Stackie's '/' form ("C:/x/stackie.exe").
#include <windows.h>

#include "base/fs_path.h"
#include "base/windows_text.h"

namespace stackie {

std::string executable_path() {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    DWORD n = GetModuleFileNameW(nullptr, path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return "";
    if (n < path.size()) return narrow_path(std::wstring_view(path.data(), n));
    path.resize(path.size() * 2);
  }
}

bool is_host_absolute_path(const std::string& path) {
  return is_absolute_path(path);
}

}  // namespace stackie
