// `stackie doctor`: checks what the sandbox and the daemon need from this host, one line each,
// OK or FAIL with the fix.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "base/directories.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "cli/doctor_checks.h"
#include "stack/settings.h"

namespace stackie::cli {

extern const char kDoctorUsage[] =
    "Usage: stackie doctor [--fix]\n"
    "\n"
    "Check the host: kernel version, what the sandbox needs (Linux: unprivileged user\n"
    "namespaces, sysctls and a real unshare, seccomp, and which backend blocks get: the\n"
    "namespace lockbox, or the weaker landlock backend where the host denies it; macOS:\n"
    "Seatbelt), that the daemon answers (a request with a deadline), how block limits are\n"
    "enforced (Linux: a delegated cgroup v2 or rlimits, and why), and that storage is\n"
    "writable with free space (a real write). Creates nothing. One line per check, OK or\n"
    "FAIL with the fix.\n"
    "\n"
    "  --fix   print the one command (with sudo) that lets the namespace lockbox run on a\n"
    "          Linux host whose AppArmor restricts user namespaces (Ubuntu 23.10+): it\n"
    "          installs stackie-lockbox's AppArmor profile. Runs nothing itself.\n"
    "\n"
    "Exit status: 0 every check passed, 1 some check failed, 2 usage error.\n";

namespace {

struct Report {
  int failures = 0;
  void line(bool ok, const std::string& what, const std::string& fix = "") {
    std::printf("%-4s %s%s%s\n", ok ? "OK" : "FAIL", what.c_str(), ok || fix.empty() ? "" : " - ",
                ok ? "" : fix.c_str());
    if (!ok) ++failures;
  }
};

// Below this much free space a stack's logs, state file and databases start failing.
constexpr unsigned long long kLowSpaceBytes = 64ull << 20;

// `path`, or its nearest ancestor that exists: what the daemon will create `path` in.
std::string existing_ancestor(std::string path) {
  while (!path.empty() && access(path.c_str(), F_OK) != 0) {
    auto slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash == std::string::npos ? 0 : slash);
  }
  return path.empty() ? "/" : path;
}

// A real write: 64 KiB written and fsync'ed to a probe file, then removed. An empty file
// would succeed on a full disk; the data must reach the file system for the answer to count.
std::string write_probe(const std::string& dir) {
  std::string probe = dir + "/.stackie-doctor-probe";
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return std::string("cannot create a file in it: ") + std::strerror(errno);
  std::string block(64 * 1024, 'x');
  std::string error;
  ssize_t n = write(fd, block.data(), block.size());
  if (n != static_cast<ssize_t>(block.size()))
    error = std::string("cannot write to it: ") + (n < 0 ? std::strerror(errno) : "short write");
  else if (fsync(fd) != 0)
    error = std::string("cannot write to it: ") + std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return error;
}

void check_storage(Report& report, const std::string& root, const std::string& config) {
  std::string dir = existing_ancestor(root);
  std::string what =
      "storage writable: " + root + (dir == root ? "" : " (to be made in " + dir + ")");
  std::string error = write_probe(dir);
  report.line(error.empty(), what, error + "; make it writable or set storage_root in " + config);
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) {
    report.line(false, "free space in " + dir, std::strerror(errno));
    return;
  }
  unsigned long long free_bytes = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
  report.line(free_bytes >= kLowSpaceBytes,
              "free space in " + dir + ": " + std::to_string(free_bytes >> 20) + " MiB",
              "less than " + std::to_string(kLowSpaceBytes >> 20) +
                  " MiB: logs, the state file and volumes will fail to write");
}

// A round trip, not just a connect: a stopped (SIGSTOP) or wedged daemon still accepts
// connections (the kernel queues them) but never answers.
// Its daemon.status result when it answers.
std::optional<Json> check_daemon(Report& report, const std::string& socket) {
  ipc::ClientOptions options;
  options.connect_timeout = std::chrono::milliseconds(2000);
  options.idle_timeout = std::chrono::milliseconds(3000);
  auto client = ipc::Client::connect(socket, options);
  if (!client.ok()) {
    report.line(false, "daemon reachable on " + socket,
                "start it: stackie daemon start (" + client.error().message + ")");
    return std::nullopt;
  }
  auto reply = client->call("daemon.status");
  if (!reply.ok() || !reply->ok()) {
    report.line(false, "daemon answers on " + socket,
                (reply.ok() ? reply->error().message : reply.error().message) +
                    "; it is stopped or wedged: look at its pid in stackied.pid, or restart it "
                    "(stackie daemon stop; stackie daemon start)");
    return std::nullopt;
  }
  report.line(true, "daemon answers on " + socket + " (pid " +
                        std::to_string(reply->result()["pid"].int_or(0)) + ")");
  return reply->result();
}

// Which enforcement of the blocks' `limits` is in use: the running daemon's answer, else what
// a daemon started from here would find. Both work; the cgroup bounds a block as a whole.
void report_limits(Report& report, const Json* daemon_status) {
  if (daemon_status != nullptr) {
    std::string enforcement = (*daemon_status)["limits"].string_or("");
    if (!enforcement.empty()) {
      report.line(true, "block limits: " + enforcement);
      return;
    }
  }
  report.line(true, "block limits (for a daemon started from here): " + limits_enforcement_here());
}

}  // namespace

int run_doctor(std::span<char*> argv) {
  if (argv.size() == 2 && std::string(argv[1]) == "--fix") return print_sandbox_fix();
  if (argv.size() > 1) return usage_error("doctor", "takes no arguments but --fix");
  Report report;
  utsname uts{};
  uname(&uts);
  report.line(true, std::string("kernel ") + uts.sysname + " " + uts.release);
  for (const DoctorLine& check : sandbox_host_checks())
    report.line(check.ok, check.what, check.fix);
  auto socket = daemon_socket_path();
  if (!socket.ok()) {
    report.line(false, "socket path", socket.error().message);
  } else {
    auto daemon_status = check_daemon(report, *socket);
    report_limits(report, daemon_status ? &*daemon_status : nullptr);
  }
  auto home = stackie_home(current_environment());
  if (home.ok()) {
    auto settings = load_settings(config_path(*home));
    check_storage(report, storage_root(*home, settings.ok() ? *settings : Settings{}),
                  config_path(*home));
  } else {
    report.line(false, "stackie home", home.error().message);
  }
  return report.failures == 0 ? kExitOk : kExitFailed;
}

}  // namespace stackie::cli
