// `stackie doctor`: checks what the sandbox and the daemon need from this host, one line each,
// OK or FAIL with the fix.
#include <fcntl.h>
#include <sched.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <span>
#include <string>

#include "base/cgroup_v2.h"
#include "base/directories.h"
#include "base/fs_path.h"
#include "base/sandbox_probe.h"
#include "base/userns_diagnosis.h"
#include "cli/cli.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/settings.h"

namespace stackie::cli {

extern const char kDoctorUsage[] =
    "Usage: stackie doctor [--fix]\n"
    "\n"
    "Check the host: kernel version, unprivileged user namespaces (sysctls and a real\n"
    "unshare), seccomp, that the daemon answers (a request with a deadline), how block\n"
    "limits are enforced (a delegated cgroup v2 or rlimits, and why), and that storage is\n"
    "writable with free space (a real write), and which sandbox backend blocks get: the\n"
    "namespace lockbox, or the weaker landlock backend where the host denies it. Creates\n"
    "nothing. One line per check, OK or FAIL with the fix.\n"
    "\n"
    "  --fix   print the one command (with sudo) that lets the namespace lockbox run on a\n"
    "          host whose AppArmor restricts user namespaces (Ubuntu 23.10+): it installs\n"
    "          stackie-lockbox's AppArmor profile. Runs nothing itself.\n"
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

// 0 when an unprivileged user namespace can be made, else the errno of unshare(CLONE_NEWUSER)
// (in a child: this process stays as it is).
int unshare_user_errno() {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno & 0xff);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return ECHILD;
  return WEXITSTATUS(status);
}

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
  auto cgroup = find_delegated_cgroup();
  report.line(true,
              "block limits (for a daemon started from here): " +
                  (cgroup.ok() ? "cgroup v2 (" + cgroup->dir + ")"
                               : "rlimits (no delegated cgroup: " + cgroup.error().message + ")"));
}

// The installed profile (share/apparmor), next to a relocated install or at the build's prefix.
std::string apparmor_profile_path() {
  std::string relocated = relocated_install_dir(STACKIE_INSTALL_DATADIR "/stackie");
  if (!relocated.empty() && ::access((relocated + "/apparmor/stackie-lockbox").c_str(), R_OK) == 0)
    return relocated + "/apparmor/stackie-lockbox";
  return std::string(STACKIE_DATADIR) + "/apparmor/stackie-lockbox";
}

bool apparmor_restricts_userns() {
  std::ifstream file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  std::string value;
  return file >> value && value == "1";
}

int print_apparmor_fix() {
  std::string profile = apparmor_profile_path();
  if (!apparmor_restricts_userns())
    std::printf("# AppArmor does not restrict user namespaces on this host: nothing to install.\n");
  if (::access(profile.c_str(), R_OK) != 0) {
    std::fprintf(stderr,
                 "stackie: doctor --fix: no AppArmor profile at %s (installed by `meson "
                 "install`)\n",
                 profile.c_str());
    return kExitFailed;
  }
  std::printf(
      "sudo sh -c 'install -m 644 %s /etc/apparmor.d/stackie-lockbox && "
      "apparmor_parser -r /etc/apparmor.d/stackie-lockbox'\n",
      profile.c_str());
  return kExitOk;
}

// Which backend a daemon started from here gives blocks, and what that costs.
void report_backend(Report& report) {
  BackendChoice choice = choose_linux_backend();
  std::string configured = "auto";
  if (auto home = stackie_home(current_environment()); home.ok())
    if (auto settings = load_settings(config_path(*home)); settings.ok())
      configured = settings->sandbox_backend;
  std::string landlock = "landlock ABI " + std::to_string(choice.landlock_abi);
  std::string fix = apparmor_restricts_userns()
                        ? "AppArmor restricts user namespaces: `stackie doctor --fix` prints the "
                          "one sudo command that installs stackie-lockbox's profile"
                        : "see the user namespace line above";
  report.line(choice.probe.works,
              "namespace lockbox can run (user + mount namespace, uid map, mount)",
              "failed at " + choice.probe.step + ": " + std::strerror(choice.probe.errnum) +
                  "; blocks fall back to the landlock backend. " + fix);
  bool landlock_chosen = configured == "landlock" ||
                         (configured == "auto" && choice.backend == LinuxBackend::landlock);
  if (!landlock_chosen) {
    report.line(true, "sandbox backend: namespaces (" + landlock + " available as fallback)");
    return;
  }
  report.line(choice.landlock_abi >= 1,
              "sandbox backend: landlock (" + landlock +
                  (configured == "landlock" ? ", set in config.toml" : ", chosen automatically") +
                  "): weaker than the namespace lockbox: blocks see the host's processes, "
                  "hostname, uid and account names, may send UDP, and bind served ports on every "
                  "host address" +
                  (choice.landlock_abi < 4 ? "; ABI < 4: TCP is not restricted at all" : "") +
                  (choice.landlock_abi < 6 ? "; ABI < 6: signals to host processes are not "
                                             "scoped"
                                           : ""),
              "this kernel has no Landlock either: only --no-sandbox remains");
}

}  // namespace

int run_doctor(std::span<char*> argv) {
  if (argv.size() == 2 && std::string(argv[1]) == "--fix") return print_apparmor_fix();
  if (argv.size() > 1) return usage_error("doctor", "takes no arguments but --fix");
  Report report;
  utsname uts{};
  uname(&uts);
  report.line(true, std::string("kernel ") + uts.sysname + " " + uts.release);
  // The lockbox's own diagnosis (base/userns_diagnosis.h), so both say the same thing.
  const int unshare_errno = unshare_user_errno();
  const UsernsFacts facts = read_userns_facts(unshare_errno);
  for (const UsernsSysctl& sysctl : userns_sysctls(facts))
    report.line(!sysctl.forbids, sysctl.name + " = " + sysctl.value, "run: " + sysctl.fix);
  report.line(unshare_errno == 0, "unshare(CLONE_NEWUSER) works",
              userns_cause_and_fix(facts) + " (or run blocks with --no-sandbox)");
  report_backend(report);
  std::string seccomp;
  std::ifstream status("/proc/self/status");
  for (std::string l; std::getline(status, l);)
    if (l.rfind("Seccomp:", 0) == 0) seccomp = l;
  report.line(!seccomp.empty(),
              "seccomp available (" + (seccomp.empty() ? "no Seccomp field" : seccomp) + ")",
              "a kernel built with CONFIG_SECCOMP_FILTER");
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
