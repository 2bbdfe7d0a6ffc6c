// Windows only: UTF-8 <-> UTF-16 at the Win32 boundary, and Win32 errors as Errors. Stackie keeps
// every string in UTF-8 and every path with '/' separators; the W functions get them widened.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace stackie {

std::wstring widen(std::string_view text);
std::string narrow(std::wstring_view text);
// narrow() with every '\' turned into '/': a path from Windows into Stackie's form.
std::string narrow_path(std::wstring_view path);
// A final path as GetFinalPathNameByHandleW gives it, in Stackie's form: "\\?\C:\dir" is
// "C:/dir", and "\\?\UNC\server\share\dir" (a file on a share) is "//server/share/dir", not the
// relative "UNC/server/share/dir" that dropping the prefix alone would leave.
std::string path_from_final_name(std::wstring_view name);
// "WHAT: <FormatMessage text> (CODE)"; the code defaults to GetLastError().
Error windows_error(std::string_view what);
Error windows_error(std::string_view what, unsigned long code);

}  // namespace stackie
