// The named-pipe transport of the client (Windows). Overlapped I/O on the pipe, each wait bounded
// by the call's deadline (CancelIoEx when it passes). The server is checked as on POSIX: the
// process serving the pipe must run as our user, so a pipe squatted by someone else is refused.
// fd_ is a C runtime fd wrapping the pipe handle (_open_osfhandle), as the header promises.
#include <fcntl.h>
#include <io.h>
#include <uv.h>
#include <windows.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "base/windows_text.h"
#include "ipc/client.h"
#include "ipc/windows_sid.h"

namespace stackie::ipc {

namespace {

using Clock = std::chrono::steady_clock;

// No deadline is time_point::max(): plain values, which GCC's flow analysis follows (with a
// std::optional it warns "may be used uninitialized" at -O2 in this toolchain).
Clock::time_point until(std::optional<Clock::time_point> deadline) {
  return deadline.value_or(Clock::time_point::max());
}

DWORD wait_ms(Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return INFINITE;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<DWORD>(std::min<long long>(left, 1 << 30));
}

HANDLE pipe_of(int fd) {
  return reinterpret_cast<HANDLE>(_get_osfhandle(fd));
}

bool is_broken(DWORD error) {
  return error == ERROR_BROKEN_PIPE || error == ERROR_NO_DATA || error == ERROR_PIPE_NOT_CONNECTED;
}

// One overlapped ReadFile/WriteFile, waited for until `deadline`. nullopt: timed out (and
// cancelled); otherwise the bytes moved, or the error code of the operation.
struct Transfer {
  std::optional<DWORD> bytes;
  DWORD error = 0;
};

template <typename Start>
Transfer overlapped(HANDLE pipe, Clock::time_point deadline, Start start) {
  OVERLAPPED request{};
  request.hEvent = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  Transfer result;
  DWORD moved = 0;
  if (!start(&request)) {
    const DWORD error = GetLastError();
    if (error != ERROR_IO_PENDING) {
      CloseHandle(request.hEvent);
      result.error = error;
      result.bytes = 0;
      return result;
    }
    if (WaitForSingleObject(request.hEvent, wait_ms(deadline)) == WAIT_TIMEOUT) {
      CancelIoEx(pipe, &request);
      // Completed meanwhile? Then the data is ours; otherwise the cancel went through.
      if (!GetOverlappedResult(pipe, &request, &moved, TRUE) &&
          GetLastError() == ERROR_OPERATION_ABORTED) {
        CloseHandle(request.hEvent);
        return result;  // timed out
      }
      CloseHandle(request.hEvent);
      result.bytes = moved;
      return result;
    }
  }
  if (!GetOverlappedResult(pipe, &request, &moved, FALSE)) result.error = GetLastError();
  CloseHandle(request.hEvent);
  result.bytes = moved;
  return result;
}

}  // namespace

void Client::close() {
  if (fd_ >= 0) _close(fd_);  // closes the pipe handle too
  fd_ = -1;
}

Result<Client> Client::connect(const std::string& socket_path, ClientOptions options) {
  if (!is_pipe_name(socket_path))
    return Error{UV_EINVAL, "'" + socket_path + "' is not a named pipe (\\\\.\\pipe\\NAME)"};
  const std::wstring name = widen(socket_path);
  const Clock::time_point deadline = options.connect_timeout.count() > 0
                                         ? Clock::now() + options.connect_timeout
                                         : Clock::time_point::max();
  HANDLE pipe = INVALID_HANDLE_VALUE;
  for (;;) {
    // SECURITY_IDENTIFICATION: the server may learn who we are, not act as us.
    pipe = CreateFileW(name.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                       FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                       nullptr);
    if (pipe != INVALID_HANDLE_VALUE) break;
    const DWORD error = GetLastError();
    if (error == ERROR_FILE_NOT_FOUND)
      return Error{UV_ENOENT, "the daemon is not running (no pipe " + socket_path + ")"};
    if (error == ERROR_PIPE_BUSY && wait_ms(deadline) > 0) {
      // Every instance is taken: the daemon is alive, only busy. Wait for a free one.
      WaitNamedPipeW(name.c_str(), std::min<DWORD>(wait_ms(deadline), 100));
      continue;
    }
    if (error == ERROR_PIPE_BUSY)
      return Error{UV_ETIMEDOUT, "the daemon at " + socket_path + " does not accept connections"};
    return windows_error("cannot connect to the daemon at " + socket_path, error);
  }
  const int fd = _open_osfhandle(reinterpret_cast<intptr_t>(pipe), _O_BINARY);
  if (fd < 0) {
    CloseHandle(pipe);
    return Error{UV_EMFILE, "cannot wrap the pipe handle in a C runtime fd"};
  }
  Client client(fd, options);
  if (options.check_server_uid) {
    ULONG pid = 0;
    if (!GetNamedPipeServerProcessId(pipe, &pid))
      return windows_error("GetNamedPipeServerProcessId");
    STACKIE_TRY_ASSIGN(server, process_identity(pid));
    STACKIE_TRY_ASSIGN(own, own_identity());
    if (server.user_sid != own.user_sid)
      return Error{UV_EACCES, socket_path + " is served by " + server.user_sid +
                                  ", not by us; refusing to talk to it"};
    // A block runs as our user too, under a restricted token: one that made a pipe of this
    // name (while no daemon held it) would be sent our requests, stack files and secrets.
    if (server.restricted && !own.restricted)
      return Error{UV_EACCES, socket_path +
                                  " is served by a process with a restricted token (a "
                                  "block?), not by the daemon; refusing to talk to it"};
    if (!options.server_program.empty() &&
        _stricmp(server.program.c_str(), options.server_program.c_str()) != 0)
      return Error{UV_EACCES, socket_path + " is served by " + server.program + " (pid " +
                                  std::to_string(pid) + "), not by " + options.server_program +
                                  "; refusing to talk to it"};
  }
  return client;
}

Status Client::write_all(std::string_view bytes) {
  if (fd_ < 0) return Error{UV_EBADF, "the connection to the daemon is closed"};
  HANDLE pipe = pipe_of(fd_);
  const Clock::time_point deadline = options_.idle_timeout.count() > 0
                                         ? Clock::now() + options_.idle_timeout
                                         : Clock::time_point::max();
  while (!bytes.empty()) {
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(bytes.size(), 1 << 20));
    Transfer sent = overlapped(pipe, deadline, [&](OVERLAPPED* request) {
      return WriteFile(pipe, bytes.data(), chunk, nullptr, request);
    });
    if (!sent.bytes) return Error{UV_ETIMEDOUT, "the daemon does not read what we send"};
    if (sent.error != 0) {
      if (is_broken(sent.error)) return Error{UV_EOF, "the daemon closed the connection"};
      return windows_error("cannot write to the daemon", sent.error);
    }
    bytes.remove_prefix(*sent.bytes);
  }
  return {};
}

Result<std::optional<std::size_t>> Client::read_some(
    char* buffer, std::size_t size, std::optional<std::chrono::steady_clock::time_point> deadline) {
  HANDLE pipe = pipe_of(fd_);
  for (;;) {
    Transfer received = overlapped(pipe, until(deadline), [&](OVERLAPPED* request) {
      return ReadFile(pipe, buffer, static_cast<DWORD>(size), nullptr, request);
    });
    if (!received.bytes) return std::optional<std::size_t>();
    if (received.error != 0) {
      if (is_broken(received.error)) return std::optional<std::size_t>(0);
      return windows_error("cannot read from the daemon", received.error);
    }
    if (*received.bytes == 0) continue;  // a zero-byte message: nothing to report
    return std::optional<std::size_t>(*received.bytes);
  }
}

}  // namespace stackie::ipc
