// `stackie daemon install` and `uninstall` on Windows: stackied.exe as a per-user autostart, the
// value "Stackie" under HKCU\Software\Microsoft\Windows\CurrentVersion\Run holding its quoted
// full path. Windows runs it at each logon; it then detaches itself as `daemon start` does.
// No service (that would run as another account) and no admin rights needed.
#include <windows.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "base/fs_path.h"
#include "base/windows_text.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/process_windows.h"

namespace stackie::cli {

namespace {

constexpr wchar_t kRunKey[] = L"Software\\Microsoft\\Windows\\CurrentVersion\\Run";
constexpr wchar_t kValueName[] = L"Stackie";
constexpr const char kRunKeyShown[] = "HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run";

int report_error(const Error& error) {
  std::fprintf(stderr, "stackie: %s\n", error.message.c_str());
  return kExitFailed;
}

// The Run value as it is now: nullopt when there is none.
Result<std::optional<std::wstring>> read_run_value() {
  HKEY key = nullptr;
  LSTATUS rc = RegOpenKeyExW(HKEY_CURRENT_USER, kRunKey, 0, KEY_QUERY_VALUE, &key);
  if (rc == ERROR_FILE_NOT_FOUND) return std::optional<std::wstring>();
  if (rc != ERROR_SUCCESS) return windows_error(std::string("cannot open ") + kRunKeyShown, rc);
  DWORD type = 0, bytes = 0;
  rc = RegQueryValueExW(key, kValueName, nullptr, &type, nullptr, &bytes);
  std::wstring data(bytes / sizeof(wchar_t) + 1, L'\0');
  if (rc == ERROR_SUCCESS)
    rc = RegQueryValueExW(key, kValueName, nullptr, &type, reinterpret_cast<BYTE*>(data.data()),
                          &bytes);
  RegCloseKey(key);
  if (rc == ERROR_FILE_NOT_FOUND) return std::optional<std::wstring>();
  if (rc != ERROR_SUCCESS) return windows_error(std::string("cannot read ") + kRunKeyShown, rc);
  data.resize(bytes / sizeof(wchar_t));
  while (!data.empty() && data.back() == L'\0') data.pop_back();
  return std::optional<std::wstring>(data);
}

}  // namespace

int run_daemon_install(std::span<char*> argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (std::string_view(argv[i]) == "--socket-activation")
      return usage_error("daemon", "--socket-activation is not available on Windows");
    return usage_error("daemon", "unexpected argument '" + std::string(argv[i]) + "'");
  }
  std::string program = find_daemon_program();
  if (program.empty())
    return report_error(Error{0, "stackied.exe is neither next to stackie.exe nor on PATH"});
  std::wstring data = L"\"" + widen(program) + L"\"";
  auto current = read_run_value();
  if (!current.ok()) return report_error(current.error());
  if (*current && **current == data) {
    std::printf("already installed: %s\\Stackie runs %s at logon\n", kRunKeyShown,
                narrow(data).c_str());
    return kExitOk;
  }
  HKEY key = nullptr;
  LSTATUS rc = RegCreateKeyExW(HKEY_CURRENT_USER, kRunKey, 0, nullptr, 0, KEY_SET_VALUE, nullptr,
                               &key, nullptr);
  if (rc != ERROR_SUCCESS)
    return report_error(windows_error(std::string("cannot open ") + kRunKeyShown, rc));
  rc = RegSetValueExW(key, kValueName, 0, REG_SZ, reinterpret_cast<const BYTE*>(data.c_str()),
                      static_cast<DWORD>((data.size() + 1) * sizeof(wchar_t)));
  RegCloseKey(key);
  if (rc != ERROR_SUCCESS)
    return report_error(windows_error(std::string("cannot write ") + kRunKeyShown, rc));
  std::printf("wrote %s\\Stackie: %s runs at logon\n", kRunKeyShown, narrow(data).c_str());
  // The Run key starts stackied with the logon's environment, not this shell's.
  if (current_environment().count("STACKIE_HOME"))
    std::fprintf(stderr,
                 "stackie: warning: STACKIE_HOME is set here but not for programs run at "
                 "logon; set it as a user environment variable too\n");
  std::printf("start it now with:\n  stackie daemon start\n");
  return kExitOk;
}

int run_daemon_uninstall(std::span<char*> argv) {
  if (argv.size() > 1)
    return usage_error("daemon", "unexpected argument '" + std::string(argv[1]) + "'");
  HKEY key = nullptr;
  LSTATUS rc = RegOpenKeyExW(HKEY_CURRENT_USER, kRunKey, 0, KEY_SET_VALUE, &key);
  if (rc == ERROR_SUCCESS) {
    rc = RegDeleteValueW(key, kValueName);
    RegCloseKey(key);
  }
  if (rc == ERROR_FILE_NOT_FOUND) {
    std::printf("nothing to remove: stackied is not installed to run at logon\n");
    return kExitOk;
  }
  if (rc != ERROR_SUCCESS)
    return report_error(
        windows_error(std::string("cannot remove ") + kRunKeyShown + "\\Stackie", rc));
  std::printf("removed %s\\Stackie\n", kRunKeyShown);
  std::printf("if it still runs, stop it with:\n  stackie daemon stop\n");
  return kExitOk;
}

std::string daemon_autostart_note() {
  auto current = read_run_value();
  if (!current.ok()) return "autostart: unknown (" + current.error().message + ")";
  if (!*current) return "autostart: not installed (stackie daemon install)";
  return std::string("autostart: ") + kRunKeyShown + "\\Stackie runs " + narrow(**current);
}

}  // namespace stackie::cli
