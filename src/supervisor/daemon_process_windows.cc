// supervisor/daemon_process.h on Windows. There is no fork: the starter (`stackied` run by
// `stackie up` or `daemon start`) runs the daemon as a new process, detached from its console
// (a Ctrl+C or a closed window of the user's terminal never reaches it), in a process group of
// its own, and out of any job the starter is in when that job allows it (a terminal's or a CI
// runner's job may kill on close; a warning says when it does not allow it). The child gets
// exactly three handles: NUL as stdin and stdout, the log file as stderr, and the write end of
// the ready pipe, whose value it is told with --ready-handle.
#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/command_line.h"
#include "base/fs_path.h"
#include "base/safe_open.h"
#include "base/windows_text.h"
#include "supervisor/daemon_process.h"
#include "supervisor/service_manager.h"

namespace stackie {

namespace {

class OwnedHandle {
 public:
  OwnedHandle() = default;
  explicit OwnedHandle(HANDLE handle) : handle_(handle) {}
  OwnedHandle(OwnedHandle&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  OwnedHandle& operator=(OwnedHandle&&) = delete;
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  ~OwnedHandle() {
    if (valid()) CloseHandle(handle_);
  }
  HANDLE get() const { return handle_; }
  HANDLE* out() { return &handle_; }
  bool valid() const { return handle_ != nullptr && handle_ != INVALID_HANDLE_VALUE; }

 private:
  HANDLE handle_ = nullptr;
};

// An inheritable handle to the daemon's log that can only append: opened below the home without
// following a planted link (safe_open), then duplicated with FILE_APPEND_DATA alone, so every
// write lands at the end whatever the position.
Result<OwnedHandle> open_log_for_child(const std::string& home, const std::string& log_path) {
  STACKIE_TRY_ASSIGN(dir, open_directory(home));
  const std::string name = log_path.substr(log_path.find_last_of('/') + 1);
  STACKIE_TRY_ASSIGN(log, open_file_in(dir.get(), name, O_WRONLY | O_APPEND | O_CREAT, home));
  HANDLE source = reinterpret_cast<HANDLE>(_get_osfhandle(log.get()));
  SetFilePointer(source, 0, nullptr, FILE_END);  // the position is shared with the duplicate
  OwnedHandle append;
  if (!DuplicateHandle(GetCurrentProcess(), source, GetCurrentProcess(), append.out(),
                       FILE_APPEND_DATA | SYNCHRONIZE, TRUE, 0))
    return windows_error("open " + log_path + " for the daemon");
  return append;
}

Result<OwnedHandle> open_null() {
  SECURITY_ATTRIBUTES inherit{sizeof inherit, nullptr, TRUE};
  OwnedHandle null(CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE,
                               FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0,
                               nullptr));
  if (!null.valid()) return windows_error("open NUL");
  return null;
}

// Runs the daemon with exactly `handles` inheritable into it. Out of the starter's job when
// the job allows it (CREATE_BREAKAWAY_FROM_JOB is refused with ERROR_ACCESS_DENIED otherwise;
// libuv's job lets its children's children out anyway).
Status run_detached(const std::wstring& program, std::wstring command_line, HANDLE null, HANDLE log,
                    HANDLE ready) {
  HANDLE handles[] = {null, log, ready};
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::string storage(size, '\0');
  auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
  if (!InitializeProcThreadAttributeList(attributes, 1, 0, &size) ||
      !UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles,
                                 sizeof handles, nullptr, nullptr))
    return windows_error("prepare the daemon's handles");
  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = null;
  startup.StartupInfo.hStdOutput = null;
  startup.StartupInfo.hStdError = log;
  startup.lpAttributeList = attributes;
  const DWORD flags = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT |
                      EXTENDED_STARTUPINFO_PRESENT;
  PROCESS_INFORMATION process{};
  BOOL started = FALSE;
  for (DWORD breakaway : {DWORD{CREATE_BREAKAWAY_FROM_JOB}, DWORD{0}}) {
    started = CreateProcessW(program.c_str(), command_line.data(), nullptr, nullptr, TRUE,
                             flags | breakaway, nullptr, nullptr, &startup.StartupInfo, &process);
    if (started || GetLastError() != ERROR_ACCESS_DENIED) break;
    // Said, not hidden: if the starter's job kills on close, the daemon and its blocks go with
    // whatever owns that job (a CI runner, an IDE's terminal).
    std::fputs(
        "stackied: warning: the job this was started in does not let the daemon leave "
        "it; the daemon ends when that job does\n",
        stderr);
  }
  DWORD error = GetLastError();
  DeleteProcThreadAttributeList(attributes);
  if (!started) return windows_error("start the daemon", error);
  CloseHandle(process.hThread);
  CloseHandle(process.hProcess);
  return {};
}

}  // namespace

// No service manager speaks sd_notify here: the Run key only starts stackied, and the starter
// learns of readiness through the ready pipe.
void notify_service_manager(const std::string&) {}

// The std handles came inheritable from the starter; libuv's spawns inherit every inheritable
// handle, so without this each monitor would hold the log and NUL too.
void prepare_process() {
  for (DWORD which : {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE})
    if (HANDLE handle = GetStdHandle(which); handle != nullptr && handle != INVALID_HANDLE_VALUE)
      SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
}

Result<int> take_activated_socket() {
  return -1;
}

void write_log(std::string_view line) {
  DWORD written = 0;
  WriteFile(GetStdHandle(STD_ERROR_HANDLE), line.data(), static_cast<DWORD>(line.size()), &written,
            nullptr);
}

Status go_background(const std::string& home, const std::string& log_path,
                     const std::vector<std::string>& args, int*) {
  STACKIE_TRY_ASSIGN(log, open_log_for_child(home, log_path));
  STACKIE_TRY_ASSIGN(null, open_null());
  OwnedHandle ready_read, ready_write;
  if (!CreatePipe(ready_read.out(), ready_write.out(), nullptr, 0) ||
      !SetHandleInformation(ready_write.get(), HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
    return windows_error("create the daemon's ready pipe");

  std::string program = executable_path();
  for (char& c : program)
    if (c == '/') c = '\\';
  std::vector<std::string> argv = {program, "--foreground", "--ready-handle",
                                   std::to_string(reinterpret_cast<uintptr_t>(ready_write.get()))};
  argv.insert(argv.end(), args.begin(), args.end());
  STACKIE_TRY(run_detached(widen(program), widen(windows_command_line(argv)), null.get(), log.get(),
                           ready_write.get()));

  // Our copy of the write end goes, so the read below ends when the daemon has reported or died.
  CloseHandle(*ready_write.out());
  *ready_write.out() = nullptr;
  std::string report;
  char buffer[512];
  DWORD got = 0;
  while (ReadFile(ready_read.get(), buffer, sizeof buffer, &got, nullptr) && got > 0)
    report.append(buffer, got);
  if (report == "ok") std::_Exit(0);
  if (report.empty()) report = "stackied: the daemon died while starting (see " + log_path + ")\n";
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

Result<int> adopt_ready_channel(std::string_view value) {
  char* end = nullptr;
  const std::string text(value);
  unsigned long long number = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return Error{0, "--ready-handle needs a handle value"};
  HANDLE handle = reinterpret_cast<HANDLE>(static_cast<uintptr_t>(number));
  if (GetFileType(handle) != FILE_TYPE_PIPE)
    return Error{0, "--ready-handle " + text + " is not a pipe this process holds"};
  SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);  // for the starter, never for a block
  int fd = _open_osfhandle(reinterpret_cast<intptr_t>(handle), _O_WRONLY | _O_BINARY);
  if (fd < 0) return Error{0, "--ready-handle " + text + ": cannot adopt it"};
  return fd;
}

}  // namespace stackie
