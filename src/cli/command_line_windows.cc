#include <windows.h>
// After windows.h, which it needs.
#include <shellapi.h>

#include "base/windows_text.h"
#include "cli/command_line.h"

namespace stackie::cli {

std::vector<std::string> utf8_command_line(int argc, char** argv) {
  SetConsoleOutputCP(CP_UTF8);
  int count = 0;
  wchar_t** words = CommandLineToArgvW(GetCommandLineW(), &count);
  if (words == nullptr || count != argc) {  // cannot happen; argv is better than nothing
    if (words != nullptr) LocalFree(words);
    return std::vector<std::string>(argv, argv + argc);
  }
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.push_back(narrow(words[i]));
  LocalFree(words);
  return out;
}

}  // namespace stackie::cli
