// `stackie-lockbox.exe`: the Windows sandbox launcher and the block's monitor (DESIGN.md §5b).
// Same command line and error protocol as on Linux (stackie-lockbox(1)): the policy as JSON on
// --policy-fd (a C runtime fd: the daemon passes it as libuv stdio 3, which the runtime maps
// to a handle), a failed step as one JSON line on --error-fd. Then: plan the restricted token,
// write the plan's ACLs, create the token and a kill-on-close job, start COMMAND suspended,
// assign it, resume it (spawn_restricted), and wait. The monitor relays COMMAND's exit code as
// its own. The job belongs to this process: when the monitor dies, however it dies, Windows
// closes the handle and kills every process of the block; the daemon in turn holds its
// monitors in a kill-on-close job of its own, so the daemon's death takes every block with it.
// For `exec`, --exit-with names the block's monitor: the command's job ends when it exits.
#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "base/version.h"
#include "sandbox/lockbox_options.h"
#include "sandbox/restricted_token_plan.h"
#include "sandbox/restricted_token_spawn.h"
#include "sandbox/setup_error.h"

namespace {

using stackie::ErrorSink;
using stackie::kExitSetupFailed;
using stackie::report;
using stackie::setup_error;

bool fd_is_open(int fd) {
  return _get_osfhandle(fd) != -1;
}

// The error fd is needed before the options are known to be valid, to report their errors.
int find_error_fd(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--error-fd") {
      char* end = nullptr;
      long fd = std::strtol(argv[i + 1], &end, 10);
      if (end && *end == '\0' && fd >= 0 && fd < 1 << 16 && fd_is_open(int(fd)))
        return static_cast<int>(fd);
      return -1;
    }
  }
  return -1;
}

bool read_all(int fd, std::string* out) {
  _setmode(fd, _O_BINARY);
  char buffer[16384];
  for (;;) {
    int n = _read(fd, buffer, sizeof buffer);
    if (n == 0) return true;
    if (n < 0) return false;
    out->append(buffer, static_cast<size_t>(n));
    if (out->size() > (16u << 20)) {
      errno = EFBIG;
      return false;
    }
  }
}

int fail(const ErrorSink& sink, std::string_view step, int errnum, const std::string& message) {
  report(sink, setup_error(step, errnum, message));
  return kExitSetupFailed;
}

struct UniqueHandle {
  HANDLE h = nullptr;
  UniqueHandle() = default;
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() {
    if (h) CloseHandle(h);
  }
};

// The block's exit code, handed from the wait callback (a thread-pool thread) to main.
struct ExitBox {
  HANDLE done = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  uint32_t code = 0;
};

}  // namespace

int main(int argc, char** argv) {
  ErrorSink sink{find_error_fd(argc, argv)};
  auto parsed = stackie::lockbox::parse_options(argc, argv);
  if (!parsed.ok()) {
    int rc = fail(sink, "options", 0, parsed.error().message);
    if (sink.error_fd < 0) std::fputs("Try 'stackie-lockbox --help'.\n", stderr);
    return rc;
  }
  stackie::lockbox::Options& options = *parsed;
  if (options.help) {
    std::fputs(stackie::lockbox::kUsage, stdout);
    return 0;
  }
  if (options.version) {
    std::printf("%s\n", stackie::version_line("stackie-lockbox").c_str());
    return 0;
  }
  if (options.error_fd >= 0) {
    if (!fd_is_open(options.error_fd))
      return fail(ErrorSink{}, "options", EBADF,
                  "--error-fd " + std::to_string(options.error_fd) + " is not open");
    sink.error_fd = options.error_fd;
  }
  if (options.policy_fd >= 0) {
    std::string json;
    if (!read_all(options.policy_fd, &json))
      return fail(sink, "policy", errno,
                  "read the policy from fd " + std::to_string(options.policy_fd));
    _close(options.policy_fd);
    auto policy = stackie::policy_from_json(json);
    if (!policy.ok()) return fail(sink, "policy", 0, policy.error().message);
    options.policy = std::move(*policy);
  }
  if (options.print_policy) {
    std::printf("%s\n", stackie::policy_to_json(options.policy).c_str());
    return 0;
  }
  if (options.join_pid != 0) return fail(sink, "join", 0, "--join is not supported on Windows yet");
  if (options.net_fd >= 0 || !options.listen_ports.empty())
    return fail(sink, "options", 0,
                "--net-fd and --listen do not apply on Windows: blocks use host ports");

  // Opened before COMMAND starts: once we hold the handle, the pid cannot be reused for
  // another process, and if PID is already gone COMMAND never runs.
  UniqueHandle exit_with;
  if (options.exit_with_pid != 0) {
    exit_with.h = OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(options.exit_with_pid));
    if (!exit_with.h || WaitForSingleObject(exit_with.h, 0) == WAIT_OBJECT_0)
      return fail(sink, "options", ESRCH,
                  "--exit-with " + std::to_string(options.exit_with_pid) +
                      ": no such process (the block stopped)");
  }

  auto plan = stackie::plan_restricted_token(options.policy);
  if (!plan.ok()) return fail(sink, "plan", 0, plan.error().message);
  if (auto acls = stackie::apply_path_acls(*plan); !acls.ok())
    return fail(sink, "acl", 0, acls.error().message);

  ExitBox box;
  if (!box.done) return fail(sink, "event", 0, "CreateEvent failed");
  stackie::WindowsStdio stdio{GetStdHandle(STD_INPUT_HANDLE), GetStdHandle(STD_OUTPUT_HANDLE),
                              GetStdHandle(STD_ERROR_HANDLE)};
  auto child = stackie::spawn_restricted(*plan, options.command, stdio, [&box](uint32_t code) {
    box.code = code;
    SetEvent(box.done);
  });
  if (!child.ok()) {
    // ERROR_FILE_NOT_FOUND / ERROR_PATH_NOT_FOUND: the command is not there (127, as on Linux).
    int code = -child.error().code;
    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) {
      report(sink, setup_error("exec", ENOENT, child.error().message));
      return stackie::kExitNotFound;
    }
    return fail(sink, "spawn", 0, child.error().message);
  }
  std::unique_ptr<stackie::RestrictedProcess> process = std::move(*child);
  // The block runs: closing the error fd is the daemon's sign (the end of file a Linux lockbox
  // gives with a close-on-exec fd). Nothing is reported on it after this point.
  if (sink.error_fd >= 0) {
    _close(sink.error_fd);
    sink.error_fd = -1;
  }
  HANDLE waits[2] = {box.done, exit_with.h};
  DWORD woke = WaitForMultipleObjects(exit_with.h ? 2 : 1, waits, FALSE, INFINITE);
  // The job goes with `process`: whatever the block left running dies with it.
  process.reset();
  // PID exited first: COMMAND was killed with its job, as SIGKILL ends it on Linux.
  if (woke == WAIT_OBJECT_0 + 1) return 128 + 9;
  return static_cast<int>(box.code);
}
