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
// The daemon's monitors get --stop-fd: 's' there sends the block CTRL_BREAK (graceful stop),
// 'k' ends its job. When the block has ended, its own monitor revokes what it granted on the
// user's paths (plan_acl_revocations).
#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// The daemon's requests on --stop-fd, read on a thread of their own and handed to main as
// events: 's' asks the block to stop, 'k' ends it. End of file (the daemon is gone, or lets
// this monitor go and kills it next) ends the block as 'k' does. The daemon's kill-on-close
// job should have ended this monitor already; this does not rest on how the host ends jobs
// (under Wine 8 a monitor was seen outliving its killed daemon by 15 s and more).
struct StopRequests {
  int fd = -1;
  HANDLE stop = CreateEventW(nullptr, FALSE, FALSE, nullptr);  // auto-reset: one per request
  HANDLE kill = CreateEventW(nullptr, FALSE, FALSE, nullptr);
};

DWORD WINAPI read_stop_requests(void* context) {
  auto* requests = static_cast<StopRequests*>(context);
  _setmode(requests->fd, _O_BINARY);
  char byte = 0;
  while (_read(requests->fd, &byte, 1) == 1) {
    if (byte == 's') SetEvent(requests->stop);
    if (byte == 'k') SetEvent(requests->kill);
  }
  SetEvent(requests->kill);
  return 0;
}

// To send CTRL_BREAK the monitor attaches to the block's console, where the block can send
// console events to it as well. The monitor ignores them all: only the daemon stops a block.
BOOL WINAPI ignore_console_events(DWORD) {
  return TRUE;
}

// Exit codes for a block the monitor ended, as the daemon reads them on every platform
// (128 + signal): terminated after a stop request it could not deliver, or killed.
constexpr uint32_t kStoppedCode = 128 + 15;
constexpr uint32_t kKilledCode = 128 + 9;

// Waits for the block to end, carrying out the daemon's requests meanwhile. Returns the
// monitor's exit code: the block's, or 137 when the block's monitor named by --exit-with exited
// first (COMMAND is then killed with its job, as SIGKILL ends it on Linux).
int wait_for_block(stackie::RestrictedProcess& process, ExitBox& box, StopRequests& requests,
                   HANDLE exit_with) {
  std::vector<HANDLE> waits{box.done};
  if (requests.fd >= 0) waits.insert(waits.end(), {requests.kill, requests.stop});
  if (exit_with) waits.push_back(exit_with);
  bool killed = false;
  for (;;) {
    DWORD woke =
        WaitForMultipleObjects(static_cast<DWORD>(waits.size()), waits.data(), FALSE, INFINITE);
    if (woke == WAIT_FAILED) return static_cast<int>(kKilledCode);  // the job goes with us
    HANDLE which = waits[woke - WAIT_OBJECT_0];
    if (which == box.done) return static_cast<int>(box.code);
    if (which == exit_with) return static_cast<int>(kKilledCode);
    if (killed) continue;  // the job is ending: nothing more to ask
    if (which == requests.kill) {
      killed = process.terminate(kKilledCode).ok();
      continue;
    }
    // A stop request. Where CTRL_BREAK cannot be delivered, waiting for the stop timeout
    // would only delay the end: the block is terminated now, and its log says why.
    if (auto sent = process.interrupt(); !sent.ok()) {
      std::fprintf(stderr,
                   "stackie-lockbox: could not ask the block to stop (%s); ending its processes\n",
                   sent.error().message.c_str());
      std::fflush(stderr);
      (void)process.terminate(kStoppedCode);
    }
  }
}

// The block's own monitor takes its grants off the user's paths when the block has ended; a
// command run beside it (`exec`, --exit-with) leaves them to the block's monitor.
void revoke_own_grants(const stackie::lockbox::Options& options,
                       const stackie::RestrictedTokenPlan& plan) {
  if (options.exit_with_pid != 0) return;
  if (auto revoked = stackie::revoke_path_acls(plan); !revoked.ok())
    std::fprintf(stderr,
                 "stackie-lockbox: the block's access to its paths was not all undone: %s\n",
                 revoked.error().message.c_str());
}

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
  // The block's own monitor grants; an `exec` beside it (--exit-with) runs only while that
  // monitor does, with the same paths, so its grants are in place already. Granting again
  // would walk the whole project tree once per exec health check.
  if (options.exit_with_pid == 0) {
    if (auto acls = stackie::apply_path_acls(*plan); !acls.ok()) {
      // What was granted before the failing path (the project, say) goes again.
      revoke_own_grants(options, *plan);
      return fail(sink, "acl", 0, acls.error().message);
    }
  }

  // Static: the reader thread may still touch it (an end of file sets `kill`) while main returns.
  static StopRequests requests;
  if (options.stop_fd >= 0) {
    if (!fd_is_open(options.stop_fd))
      return fail(sink, "options", EBADF,
                  "--stop-fd " + std::to_string(options.stop_fd) + " is not open");
    if (!requests.stop || !requests.kill) return fail(sink, "event", 0, "CreateEvent failed");
    requests.fd = options.stop_fd;
    SetConsoleCtrlHandler(ignore_console_events, TRUE);
  }

  ExitBox box;
  if (!box.done) return fail(sink, "event", 0, "CreateEvent failed");
  stackie::WindowsStdio stdio{GetStdHandle(STD_INPUT_HANDLE), GetStdHandle(STD_OUTPUT_HANDLE),
                              GetStdHandle(STD_ERROR_HANDLE)};
  auto child = stackie::spawn_restricted(*plan, options.command, stdio, [&box](uint32_t code) {
    box.code = code;
    SetEvent(box.done);
  });
  if (!child.ok()) {
    // What was granted for a block that never ran goes again at once.
    revoke_own_grants(options, *plan);
    // ERROR_FILE_NOT_FOUND / ERROR_PATH_NOT_FOUND: the command is not there (127, as on Linux).
    int code = -child.error().code;
    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) {
      report(sink, setup_error("exec", ENOENT, child.error().message));
      return stackie::kExitNotFound;
    }
    return fail(sink, "spawn", 0, child.error().message);
  }
  std::unique_ptr<stackie::RestrictedProcess> process = std::move(*child);
  // The block runs: the started line and the close are the daemon's sign (the end of file a
  // Linux lockbox gives with a close-on-exec fd). Nothing is reported on it after this point.
  if (sink.error_fd >= 0) {
    _write(sink.error_fd, stackie::kBlockStartedLine.data(),
           static_cast<unsigned>(stackie::kBlockStartedLine.size()));
    _close(sink.error_fd);
    sink.error_fd = -1;
  }
  if (requests.fd >= 0) {
    HANDLE reader = CreateThread(nullptr, 0, read_stop_requests, &requests, 0, nullptr);
    if (reader) CloseHandle(reader);  // it ends with the pipe, or with this process
  }
  int code = wait_for_block(*process, box, requests, exit_with.h);
  // Whatever the block left running ends before this monitor does: its exit is the block's end
  // for the daemon, which may start the block again at once. Past the timeout, the job's close
  // (with `process`) is the last word; it is half the daemon's backstop (spawn_lockbox_windows.cc
  // kKillBackstopMs), so that the grants are still revoked below before that ends this monitor.
  if (auto ended = process->end_job(kKilledCode, 5000); !ended.ok()) {
    std::fprintf(stderr, "stackie-lockbox: %s\n", ended.error().message.c_str());
    std::fflush(stderr);
  }
  process.reset();
  revoke_own_grants(options, *plan);
  return code;
}
