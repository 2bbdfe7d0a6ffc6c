// The server's endpoint on Windows: a named pipe (libuv's pipe server), made private to the
// user: its DACL is replaced by a protected one that allows the user's own SID and denies
// NETWORK, so neither other users, nor the user over the network, nor the user's restricted-
// token blocks (their user SID is deny-only) can open it. Each accepted client is checked as
// SO_PEERCRED would be on Linux: its process's token must carry our user SID and must not be
// restricted; at its first message the token it connected with is read again through the pipe
// (first_read_refusal), which no reused pid can stand in for. Nothing is left on disk: the
// pipe goes with the daemon, and a second daemon's bind fails (FILE_FLAG_FIRST_PIPE_INSTANCE).
#include <uv.h>
#include <windows.h>
// after windows.h
#include <aclapi.h>

#include "base/windows_text.h"
#include "ipc/server_endpoint.h"
#include "ipc/windows_sid.h"

namespace stackie::ipc {

namespace {

constexpr int kBacklog = 128;

// The pipe itself goes with the listener. The mutex is the daemon's claim on the name, as the
// lock file is on POSIX: held while it serves, gone when its process dies.
class NamedPipe : public Endpoint {
 public:
  explicit NamedPipe(HANDLE claim) : claim_(claim) {}
  ~NamedPipe() override { release(); }
  void release() override {
    if (claim_) CloseHandle(claim_);
    claim_ = nullptr;
  }
  // A named pipe lives as long as its handles: nobody can delete it under the server.
  void watch(uv_loop_t*, std::function<void()>, const LogHook&) override {}

 private:
  HANDLE claim_;
};

// "Local\stackie-pipe-NAME": one daemon per pipe name in this session. FILE_FLAG_FIRST_PIPE_
// INSTANCE (libuv's) says the same on Windows, but Wine does not enforce it.
Result<HANDLE> claim_pipe_name(const std::string& path) {
  std::string suffix = path.substr(9);
  for (char& c : suffix)
    if (c == '\\' || c == '/') c = '-';  // a kernel object name has no further '\\'
  std::string name = "Local\\stackie-pipe-" + suffix;
  HANDLE mutex = CreateMutexW(nullptr, FALSE, widen(name).c_str());
  if (!mutex) return windows_error("CreateMutex " + name);
  if (GetLastError() == ERROR_ALREADY_EXISTS) {
    CloseHandle(mutex);
    return Error{UV_EADDRINUSE, "another daemon is running (it serves " + path + ")"};
  }
  return mutex;
}

// The DACL: GENERIC_ALL for our user SID, protected (nothing inherited, no default ACEs), and
// nothing for a network logon (NETWORK, S-1-5-2, denied first): libuv makes the pipe without
// PIPE_REJECT_REMOTE_CLIENTS, and the user's own SID over SMB would pass the allow.
Status make_private(HANDLE pipe) {
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
    return windows_error("OpenProcessToken");
  DWORD size = 0;
  GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  std::string buffer(size ? size : 1, '\0');
  BOOL ok = GetTokenInformation(token, TokenUser, buffer.data(), size, &size);
  CloseHandle(token);
  if (!ok) return windows_error("GetTokenInformation(TokenUser)");
  EXPLICIT_ACCESS_W entry{};
  entry.grfAccessPermissions = GENERIC_ALL;
  entry.grfAccessMode = SET_ACCESS;
  entry.grfInheritance = NO_INHERITANCE;
  entry.Trustee.TrusteeForm = TRUSTEE_IS_SID;
  entry.Trustee.TrusteeType = TRUSTEE_IS_USER;
  entry.Trustee.ptstrName =
      static_cast<LPWSTR>(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid);
  SID_IDENTIFIER_AUTHORITY nt_authority = SECURITY_NT_AUTHORITY;
  PSID network = nullptr;
  if (!AllocateAndInitializeSid(&nt_authority, 1, SECURITY_NETWORK_RID, 0, 0, 0, 0, 0, 0, 0,
                                &network))
    return windows_error("AllocateAndInitializeSid(NETWORK)");
  EXPLICIT_ACCESS_W entries[2] = {entry, {}};
  entries[1].grfAccessPermissions = GENERIC_ALL;
  entries[1].grfAccessMode = DENY_ACCESS;
  entries[1].grfInheritance = NO_INHERITANCE;
  entries[1].Trustee.TrusteeForm = TRUSTEE_IS_SID;
  entries[1].Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
  entries[1].Trustee.ptstrName = static_cast<LPWSTR>(network);
  PACL acl = nullptr;
  DWORD made = SetEntriesInAclW(2, entries, nullptr, &acl);
  FreeSid(network);
  if (made != ERROR_SUCCESS) return windows_error("SetEntriesInAcl", made);
  DWORD rc = SetSecurityInfo(pipe, SE_KERNEL_OBJECT,
                             DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                             nullptr, nullptr, acl, nullptr);
  LocalFree(acl);
  if (rc != ERROR_SUCCESS) return windows_error("SetSecurityInfo (the pipe's DACL)", rc);
  return {};
}

}  // namespace

Result<std::unique_ptr<Endpoint>> listen_endpoint(uv_pipe_t* listener, const std::string& path,
                                                  uv_connection_cb on_connection,
                                                  const LogHook& /*log*/) {
  if (!is_pipe_name(path))
    return Error{UV_EINVAL, "'" + path + "' is not a named pipe (\\\\.\\pipe\\NAME)"};
  STACKIE_TRY_ASSIGN(claim, claim_pipe_name(path));
  auto endpoint = std::make_unique<NamedPipe>(claim);
  if (const int status = uv_pipe_bind(listener, path.c_str()); status < 0) {
    if (status == UV_EADDRINUSE || status == UV_EACCES)
      return Error{UV_EADDRINUSE, "another daemon is running (it serves " + path + ")"};
    return Error{status, "cannot create the pipe " + path + ": " + uv_strerror(status)};
  }
  // libuv creates the first instance with WRITE_DAC (for uv_pipe_chmod): we narrow it instead.
  // The DACL belongs to the pipe, so the instances libuv adds later share it.
  STACKIE_TRY(make_private(listener->pipe.serv.accept_reqs[0].pipeHandle));
  if (const int status =
          uv_listen(reinterpret_cast<uv_stream_t*>(listener), kBacklog, on_connection);
      status < 0)
    return Error{status, std::string("cannot listen: ") + uv_strerror(status)};
  return std::unique_ptr<Endpoint>(std::move(endpoint));
}

Status adopt_listening_fd(uv_pipe_t*, int, uv_connection_cb) {
  return Error{UV_ENOTSUP, "socket activation does not exist on Windows"};
}

Result<PeerCredentials> accepted_peer(uv_pipe_t* connection) {
  ULONG pid = 0;
  if (!GetNamedPipeClientProcessId(connection->handle, &pid))
    return windows_error("GetNamedPipeClientProcessId");
  STACKIE_TRY_ASSIGN(identity, process_identity(pid));
  if (identity.restricted)
    return Error{UV_EACCES,
                 "pid " + std::to_string(pid) +
                     " runs with a restricted token (a block?): it may not use the daemon"};
  PeerCredentials peer;
  peer.pid = static_cast<std::int32_t>(pid);
  peer.user_sid = identity.user_sid;
  return peer;
}

std::string refusal_for(const PeerCredentials& peer, const ServerOptions& /*options*/) {
  auto own = own_identity();
  if (!own) return "cannot read our own user SID: " + own.error().message;
  if (peer.user_sid == own->user_sid) return "";
  return "this daemon serves " + own->user_sid + " only";
}

std::string first_read_refusal(uv_pipe_t* connection) {
  auto client = pipe_client_identity(connection->handle);
  if (!client) return "cannot read the client's token: " + client.error().message;
  if (client->restricted)
    return "the client runs with a restricted token (a block?): it may not use the daemon";
  auto own = own_identity();
  if (!own) return "cannot read our own user SID: " + own.error().message;
  if (client->user_sid != own->user_sid)
    return "the client's token is " + client->user_sid + "'s; this daemon serves " + own->user_sid +
           " only";
  return "";
}

std::string describe(const PeerCredentials& peer) {
  std::string text = peer.user_sid.empty() ? "unknown user" : peer.user_sid;
  if (peer.pid > 0) text += ", pid " + std::to_string(peer.pid);
  return text;
}

bool peer_hung_up(uv_pipe_t* connection) {
  DWORD available = 0;
  if (PeekNamedPipe(connection->handle, nullptr, 0, nullptr, &available, nullptr)) return false;
  const DWORD error = GetLastError();
  return error == ERROR_BROKEN_PIPE || error == ERROR_PIPE_NOT_CONNECTED || error == ERROR_NO_DATA;
}

}  // namespace stackie::ipc
