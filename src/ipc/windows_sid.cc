#include "ipc/windows_sid.h"

#include <windows.h>
// after windows.h
#include <sddl.h>

#include <cstdlib>
#include <vector>

#include "base/windows_text.h"

namespace stackie::ipc {

namespace {

Result<ProcessIdentity> identity_of_token(HANDLE token) {
  DWORD size = 0;
  GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  std::vector<BYTE> buffer(size ? size : 1);
  if (!GetTokenInformation(token, TokenUser, buffer.data(), size, &size)) {
    return windows_error("GetTokenInformation(TokenUser)");
  }
  ProcessIdentity identity;
  identity.restricted = IsTokenRestricted(token) != FALSE;
  wchar_t* text = nullptr;
  if (!ConvertSidToStringSidW(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid, &text))
    return windows_error("ConvertSidToStringSid");
  identity.user_sid = narrow(text);
  LocalFree(text);
  return identity;
}

Result<ProcessIdentity> token_identity(HANDLE process) {
  HANDLE token = nullptr;
  if (!OpenProcessToken(process, TOKEN_QUERY, &token)) return windows_error("OpenProcessToken");
  Result<ProcessIdentity> identity = identity_of_token(token);
  CloseHandle(token);
  return identity;
}

}  // namespace

Result<ProcessIdentity> pipe_client_identity(void* pipe) {
  if (!ImpersonateNamedPipeClient(static_cast<HANDLE>(pipe)))
    return windows_error("ImpersonateNamedPipeClient");
  HANDLE token = nullptr;
  // OpenAsSelf: the token is opened with the server's own rights, not the client's.
  const BOOL opened = OpenThreadToken(GetCurrentThread(), TOKEN_QUERY, TRUE, &token);
  const DWORD error = GetLastError();
  // The loop thread must never go on as the client: if it cannot be itself again, nothing this
  // process does after could be trusted.
  if (!RevertToSelf()) std::abort();
  if (!opened) return windows_error("OpenThreadToken (the pipe client's)", error);
  Result<ProcessIdentity> identity = identity_of_token(token);
  CloseHandle(token);
  return identity;
}

Result<ProcessIdentity> process_identity(std::uint32_t pid) {
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (!process) return windows_error("OpenProcess " + std::to_string(pid));
  Result<ProcessIdentity> identity = token_identity(process);
  std::wstring image(32768, L'\0');  // the longest path Windows has
  DWORD size = static_cast<DWORD>(image.size());
  const bool named = QueryFullProcessImageNameW(process, 0, image.data(), &size) != FALSE;
  const DWORD error = GetLastError();
  CloseHandle(process);
  if (!identity) return identity;
  if (!named) return windows_error("QueryFullProcessImageName " + std::to_string(pid), error);
  image.resize(size);
  identity->program = narrow(image.substr(image.find_last_of(L"\\/") + 1));
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
