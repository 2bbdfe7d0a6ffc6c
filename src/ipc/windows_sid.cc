#include "ipc/windows_sid.h"

#include <windows.h>
// after windows.h
#include <sddl.h>

#include <vector>

#include "base/windows_text.h"

namespace stackie::ipc {

namespace {

Result<ProcessIdentity> token_identity(HANDLE process) {
  HANDLE token = nullptr;
  if (!OpenProcessToken(process, TOKEN_QUERY, &token)) return windows_error("OpenProcessToken");
  DWORD size = 0;
  GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  std::vector<BYTE> buffer(size ? size : 1);
  if (!GetTokenInformation(token, TokenUser, buffer.data(), size, &size)) {
    Error error = windows_error("GetTokenInformation(TokenUser)");
    CloseHandle(token);
    return error;
  }
  ProcessIdentity identity;
  identity.restricted = IsTokenRestricted(token) != FALSE;
  CloseHandle(token);
  wchar_t* text = nullptr;
  if (!ConvertSidToStringSidW(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid, &text))
    return windows_error("ConvertSidToStringSid");
  identity.user_sid = narrow(text);
  LocalFree(text);
  return identity;
}

}  // namespace

Result<ProcessIdentity> process_identity(std::uint32_t pid) {
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (!process) return windows_error("OpenProcess " + std::to_string(pid));
  Result<ProcessIdentity> identity = token_identity(process);
  CloseHandle(process);
  return identity;
}

Result<ProcessIdentity> own_identity() {
  return token_identity(GetCurrentProcess());
}

bool is_pipe_name(const std::string& name) {
  if (name.size() <= 9) return false;
  std::string head = name.substr(0, 9);
  for (char& c : head)
    if (c == '/') c = '\\';
  return head == "\\\\.\\pipe\\";
}

}  // namespace stackie::ipc
