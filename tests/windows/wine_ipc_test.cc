// The IPC transport on Windows, run for real under Wine: the daemon's ipc::Server on a named
// pipe and the CLI's ipc::Client, in two processes (this .exe is both: `serve PIPE` runs the
// server). Checks: no daemon = "not running" (the CLI's exit 3 path); a call with an event and a
// reply goes through; the server knows the client's user SID and pid; a second server on the
// same pipe is refused ("another daemon is running"); a name that is not a pipe is refused; the
// server reads the client's identity from its token after the first message, and is itself
// again afterwards; the client refuses a server whose program is not stackied.exe.
// What Wine cannot show: the pipe's DACL denying other users and restricted tokens (Wine does
// not check access), stated in docs/platforms.md.
#include <uv.h>
#include <windows.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "ipc/client.h"
#include "ipc/server.h"
#include "ipc/windows_sid.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

class Echo : public stackie::ipc::Handler {
 public:
  explicit Echo(stackie::ipc::Server** server) : server_(server) {}
  void on_request(stackie::ipc::Session session, const stackie::ipc::Request& request) override {
    if (request.method == "stop") {
      session.reply(stackie::Json::object());
      (*server_)->close();
      return;
    }
    session.event("echo", request.params);
    session.reply(
        stackie::Json::object({{"method", stackie::Json(request.method)},
                               {"peer", stackie::Json(session.peer().user_sid)},
                               {"pid", stackie::Json(std::to_string(session.peer().pid))}}));
  }

 private:
  stackie::ipc::Server** server_;
};

int serve(const std::string& pipe) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  stackie::ipc::Server* self = nullptr;
  Echo echo(&self);
  {
    stackie::ipc::Server server(&loop, echo);
    self = &server;
    stackie::Status listening = server.listen(pipe);
    if (!listening.ok()) {
      std::printf("serve: %s\n", listening.error().message.c_str());
      std::fflush(stdout);
      return 3;
    }
    std::printf("serving\n");
    std::fflush(stdout);
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return 0;
}

std::string self_path() {
  char path[MAX_PATH];
  GetModuleFileNameA(nullptr, path, MAX_PATH);
  return path;
}

HANDLE start_server(const std::string& pipe, HANDLE* out_read) {
  SECURITY_ATTRIBUTES inheritable{sizeof inheritable, nullptr, TRUE};
  HANDLE write_end = nullptr;
  CreatePipe(out_read, &write_end, &inheritable, 0);
  SetHandleInformation(*out_read, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOA startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdOutput = write_end;
  startup.hStdError = write_end;
  std::string line = "\"" + self_path() + "\" serve " + pipe;
  PROCESS_INFORMATION info{};
  BOOL ok = CreateProcessA(nullptr, line.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr,
                           &startup, &info);
  CloseHandle(write_end);
  if (!ok) return nullptr;
  CloseHandle(info.hThread);
  return info.hProcess;
}

std::string read_line(HANDLE from) {
  std::string line;
  char c = 0;
  DWORD n = 0;
  while (ReadFile(from, &c, 1, &n, nullptr) && n == 1 && c != '\n') line += c;
  return line;
}

}  // namespace

namespace {

// pipe_client_identity, what the daemon asks at a client's first request: the SID of the
// client's own token (here: ours), and the loop thread back to its own token afterwards (no
// thread token left, so OpenThreadToken fails with ERROR_NO_TOKEN).
void test_pipe_client_identity(const std::string& name) {
  std::wstring wide(name.begin(), name.end());
  HANDLE server =
      CreateNamedPipeW(wide.c_str(), PIPE_ACCESS_DUPLEX, PIPE_TYPE_BYTE, 1, 4096, 4096, 0, nullptr);
  HANDLE client = CreateFileW(wide.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                              SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
  check(server != INVALID_HANDLE_VALUE && client != INVALID_HANDLE_VALUE,
        "token check: a pipe and its client");
  if (server == INVALID_HANDLE_VALUE || client == INVALID_HANDLE_VALUE) return;
  DWORD moved = 0;
  char data = 'x';
  WriteFile(client, &data, 1, &moved, nullptr);
  ReadFile(server, &data, 1, &moved, nullptr);
  auto seen = stackie::ipc::pipe_client_identity(server);
  auto own = stackie::ipc::own_identity();
  check(seen.ok() && own.ok() && seen->user_sid == own->user_sid && !seen->restricted,
        "token check: the client's token is ours (" +
            (seen.ok() ? seen->user_sid : seen.error().message) + ")");
  HANDLE token = nullptr;
  const bool impersonating = OpenThreadToken(GetCurrentThread(), TOKEN_QUERY, TRUE, &token);
  const DWORD error = GetLastError();
  if (token) CloseHandle(token);
  check(!impersonating && error == ERROR_NO_TOKEN,
        "token check: the server is itself again (no thread token)");
  CloseHandle(client);
  CloseHandle(server);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "serve") return serve(argv[2]);
  const std::string pipe =
      "\\\\.\\pipe\\stackie-wine-ipc-test-" + std::to_string(GetCurrentProcessId());

  auto none = stackie::ipc::Client::connect(pipe);
  check(!none.ok() && stackie::ipc::is_daemon_not_running(none.error()),
        "no server: the daemon is not running (" +
            (none.ok() ? std::string("connected?") : none.error().message) + ")");

  auto bad = stackie::ipc::Client::connect("C:/not-a-pipe");
  check(!bad.ok() && !stackie::ipc::is_daemon_not_running(bad.error()),
        "a name that is not a pipe is an error of its own (" +
            (bad.ok() ? std::string("connected?") : bad.error().message) + ")");

  HANDLE output = nullptr;
  HANDLE server = start_server(pipe, &output);
  check(server != nullptr, "the server process starts");
  if (!server) return 1;
  std::string first = read_line(output);
  check(first.rfind("serving", 0) == 0, "it serves " + pipe + " (" + first + ")");

  // The CLI talks only to stackied.exe: this server is this test's own program.
  auto impostor = stackie::ipc::Client::connect(pipe);
  check(!impostor.ok() &&
            impostor.error().message.find("stackie-wine-ipc-test.exe") != std::string::npos &&
            impostor.error().message.find("not by stackied.exe") != std::string::npos,
        "a server that is not stackied.exe is refused, by name (" +
            (impostor.ok() ? std::string("connected") : impostor.error().message) + ")");
  stackie::ipc::ClientOptions this_program;
  this_program.server_program = "STACKIE-wine-ipc-test.exe";  // compared ignoring case
  auto client = stackie::ipc::Client::connect(pipe, this_program);
  check(client.ok(), "the client connects" + (client.ok() ? "" : ": " + client.error().message));
  if (client.ok()) {
    std::string echoed;
    auto reply = client->call(
        "hello", stackie::Json::object({{"x", stackie::Json("y")}}),
        [&](const stackie::ipc::Event& event) { echoed = stackie::to_json(event.data); });
    check(reply.ok() && reply->ok(),
          "a call gets its reply" + (reply.ok() ? "" : ": " + reply.error().message));
    check(echoed == "{\"x\":\"y\"}", "and its event first (" + echoed + ")");
    if (reply.ok() && reply->ok()) {
      const std::string peer = reply->result()["peer"].as_string();
      check(peer.rfind("S-1-5-", 0) == 0, "the server saw our user SID (" + peer + ")");
      check(reply->result()["pid"].as_string() == std::to_string(GetCurrentProcessId()),
            "and our pid (" + reply->result()["pid"].as_string() + ")");
    }
  }

  HANDLE second_output = nullptr;
  HANDLE second = start_server(pipe, &second_output);
  std::string refused = read_line(second_output);
  DWORD second_code = 0;
  WaitForSingleObject(second, 30000);
  GetExitCodeProcess(second, &second_code);
  check(second_code == 3 && refused.find("another daemon is running") != std::string::npos,
        "a second server on the pipe is refused (" + refused + ")");

  if (client.ok()) {
    auto stopped = client->call("stop");
    check(stopped.ok(), "the server stops on request");
  }
  check(WaitForSingleObject(server, 30000) == WAIT_OBJECT_0, "and exits");
  test_pipe_client_identity(pipe + "-token");
  std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
