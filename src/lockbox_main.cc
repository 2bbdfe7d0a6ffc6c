// `stackie-lockbox`: the sandbox launcher (DESIGN.md §1, §5). The edge: parse, read the policy
// fd, then hand over to the Linux backend, which reports its own setup failures on the error fd.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "base/sandbox_probe.h"
#include "base/version.h"
#include "sandbox/linux_landlock.h"
#include "sandbox/linux_launch.h"
#include "sandbox/lockbox_options.h"

namespace {

using stackie::linux_sandbox::ErrorSink;
using stackie::linux_sandbox::kExitSetupFailed;
using stackie::linux_sandbox::report;
using stackie::linux_sandbox::setup_error;

// The error fd is needed before the options are known to be valid, to report their errors.
int find_error_fd(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--error-fd") {
      char* end = nullptr;
      long fd = std::strtol(argv[i + 1], &end, 10);
      if (end && *end == '\0' && fd >= 0 && fd < 1 << 20 && fcntl(int(fd), F_GETFD) >= 0)
        return static_cast<int>(fd);
      return -1;
    }
  }
  return -1;
}

bool read_all(int fd, std::string* out) {
  char buffer[16384];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
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
  if (options.print_backend) {
    stackie::BackendChoice choice = stackie::choose_linux_backend();
    std::printf("%s\n", std::string(stackie::to_string(choice.backend)).c_str());
    std::printf("landlock ABI %d (%s)\n", choice.landlock_abi,
                stackie::linux_sandbox::landlock_features(choice.landlock_abi).c_str());
    if (!choice.reason.empty()) std::printf("why: %s\n", choice.reason.c_str());
    return 0;
  }
  if (options.error_fd >= 0) {
    if (fcntl(options.error_fd, F_SETFD, FD_CLOEXEC) != 0)
      return fail(ErrorSink{}, "options", errno,
                  "--error-fd " + std::to_string(options.error_fd) + " is not open");
    sink.error_fd = options.error_fd;
  }
  if (options.policy_fd >= 0) {
    std::string json;
    if (!read_all(options.policy_fd, &json))
      return fail(sink, "policy", errno,
                  "read the policy from fd " + std::to_string(options.policy_fd));
    close(options.policy_fd);
    auto policy = stackie::policy_from_json(json);
    if (!policy.ok()) return fail(sink, "policy", 0, policy.error().message);
    options.policy = std::move(*policy);
  }
  if (options.print_policy) {
    std::printf("%s\n", stackie::policy_to_json(options.policy).c_str());
    return 0;
  }
  for (int fd : options.policy.pass_fds) {
    if (fcntl(fd, F_GETFD) < 0 || fd == sink.error_fd)
      return fail(sink, "options", EBADF, "pass fd " + std::to_string(fd) + " is not usable");
  }
  if (options.net_fd >= 0 && fcntl(options.net_fd, F_SETFD, FD_CLOEXEC) != 0)
    return fail(sink, "options", errno,
                "--net-fd " + std::to_string(options.net_fd) + " is not open");
  if (options.cgroup_fd >= 0 && fcntl(options.cgroup_fd, F_SETFD, FD_CLOEXEC) != 0)
    return fail(sink, "options", errno,
                "--cgroup-fd " + std::to_string(options.cgroup_fd) + " is not open");
  stackie::linux_sandbox::LaunchRequest request{std::move(options.policy),
                                                std::move(options.command),
                                                sink,
                                                {options.net_fd, std::move(options.listen_ports)},
                                                options.cgroup_fd};
  if (options.join_pid != 0) return stackie::linux_sandbox::join_sandbox(options.join_pid, request);
  // auto: the namespace lockbox where this host allows it (one probe fork), else landlock.
  bool landlock = options.backend == "landlock" ||
                  (options.backend == "auto" &&
                   stackie::choose_linux_backend().backend == stackie::LinuxBackend::landlock);
  if (landlock) return stackie::linux_sandbox::run_landlocked(request);
  return stackie::linux_sandbox::run_sandboxed(request);
}
