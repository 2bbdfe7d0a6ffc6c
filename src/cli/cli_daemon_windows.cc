// Windows: the process's environment from GetEnvironmentStringsW and its directory from
// GetCurrentDirectoryW (UTF-16, so names outside the ANSI code page survive), and stackied.exe
// started with CreateProcessW. The child is put in no job of ours (a kill-on-close job would take
// the daemon down with this stackie); how it outlives this console is stackied's own business
// (daemon_process.h).
#include <io.h>
#include <windows.h>

#include <cstdio>
#include <string>

#include "base/fs_path.h"
#include "base/windows_text.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/daemon_process.h"
#include "cli/process_windows.h"

namespace stackie::cli {

std::string find_daemon_program() {
  std::string dir = executable_dir();
  if (!dir.empty()) {
    std::string sibling = join_path(dir, "stackied.exe");
    DWORD attributes = GetFileAttributesW(widen(sibling).c_str());
    if (attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY)) {
      for (char& c : sibling)
        if (c == '/') c = '\\';
      return sibling;
    }
  }
  // SearchPathW with PATH's value as the list searches those directories only.
  const DWORD path_size = GetEnvironmentVariableW(L"PATH", nullptr, 0);
  if (path_size == 0) return "";
  std::wstring path(path_size, L'\0');
  path.resize(GetEnvironmentVariableW(L"PATH", path.data(), path_size));
  wchar_t found[MAX_PATH];
  DWORD n = SearchPathW(path.c_str(), L"stackied.exe", nullptr, MAX_PATH, found, nullptr);
  if (n == 0 || n >= MAX_PATH) return "";
  return narrow(std::wstring_view(found, n));
}

Status spawn_daemon() {
  std::string program = find_daemon_program();
  if (program.empty()) return Error{0, "stackied.exe is neither next to stackie.exe nor on PATH"};
  ChildSpec spec;
  spec.argv = {program};
  STACKIE_TRY_ASSIGN(process, start_process(spec));
  int code = wait_for_exit(process);
  CloseHandle(process);
  if (code == 0) return {};
  return Error{0, spec.argv[0] + " exited with status " + std::to_string(code) +
                      " (see its log in $STACKIE_HOME)"};
}

Environment current_environment() {
  Environment env;
  wchar_t* block = GetEnvironmentStringsW();
  if (block == nullptr) return env;
  for (const wchar_t* entry = block; *entry != L'\0'; entry += wcslen(entry) + 1) {
    std::string text = narrow(entry);
    // "=C:=C:\dir" entries are cmd.exe's per-drive directories, not variables.
    auto eq = text.find('=', 1);
    if (text.empty() || text[0] == '=' || eq == std::string::npos) continue;
    env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  FreeEnvironmentStringsW(block);
  return env;
}

// In Stackie's form ("C:/dir"), as every path the stack files and the daemon see.
Result<std::string> current_directory() {
  DWORD size = GetCurrentDirectoryW(0, nullptr);
  std::wstring buffer(size, L'\0');
  DWORD n = GetCurrentDirectoryW(size, buffer.data());
  if (n == 0 || n >= size) return windows_error("cannot get the current directory");
  return narrow_path(std::wstring_view(buffer.data(), n));
}

// A console counts as a terminal only when it takes VT sequences (colours, cursor moves: the
// live views write them), which Windows 10 consoles do once asked. An older console is treated
// as a pipe: plain lines, and `up` does not stay in the foreground.
bool stdout_is_tty() {
  HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
  DWORD mode = 0;
  if (!GetConsoleMode(out, &mode)) return false;
  return (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) ||
         SetConsoleMode(out, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
}

}  // namespace stackie::cli
