#include "base/sandbox_probe.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stackie {
namespace {

struct ChildReport {
  char step[16];
  int errnum;
};

bool write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  close(fd);
  errno = err;
  return ok;
}

[[noreturn]] void probe_child(int report_fd, uid_t uid, gid_t gid) {
  ChildReport report{};
  auto fail = [&](const char* step) {
    report.errnum = errno;
    std::strncpy(report.step, step, sizeof report.step - 1);
    ssize_t ignored = write(report_fd, &report, sizeof report);
    (void)ignored;
    _exit(1);
  };
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) fail("unshare");
  if (!write_file("/proc/self/setgroups", "deny") && errno != ENOENT) fail("setgroups");
  if (!write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n")) fail("uid_map");
  if (!write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) fail("gid_map");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail("mount");
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=4k") != 0) fail("mount");
  _exit(0);
}

}  // namespace

std::string_view to_string(LinuxBackend backend) {
  return backend == LinuxBackend::landlock ? "landlock" : "namespaces";
}

Result<LinuxBackend> parse_linux_backend(std::string_view text) {
  if (text == "namespaces") return LinuxBackend::namespaces;
  if (text == "landlock") return LinuxBackend::landlock;
  return Error{
      0, "unknown sandbox backend '" + std::string(text) + "' (expected namespaces or landlock)"};
}

NamespaceProbe probe_namespace_sandbox() {
  NamespaceProbe probe;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {false, "pipe", errno};
  uid_t uid = getuid();
  gid_t gid = getgid();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    probe_child(fds[1], uid, gid);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return {false, "fork", errno};
  }
  ChildReport report{};
  ssize_t n;
  do n = read(fds[0], &report, sizeof report);
  while (n < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof report)) return {false, report.step, report.errnum};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {false, "probe", ECHILD};
  probe.works = true;
  return probe;
}

int landlock_abi_version() {
  // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U << 0);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

BackendChoice choose_linux_backend() {
  BackendChoice choice;
  choice.probe = probe_namespace_sandbox();
  choice.landlock_abi = landlock_abi_version();
  if (choice.probe.works) return choice;
  choice.backend = LinuxBackend::landlock;
  choice.reason = "unprivileged user namespaces cannot hold a sandbox here (" + choice.probe.step +
                  ": " + std::strerror(choice.probe.errnum) + ")";
  return choice;
}

}  // namespace stackie
