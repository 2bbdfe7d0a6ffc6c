#include <windows.h>

#include "base/windows_text.h"
#include "stack/file_kind.h"

namespace stackie {

bool is_file_or_directory_itself(const std::string& path) {
  DWORD attributes = GetFileAttributesW(widen(path).c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_REPARSE_POINT) &&
         !(attributes & FILE_ATTRIBUTE_DEVICE);
}

}  // namespace stackie
