#include "sandbox/lockbox_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/version.h"

namespace stackie::lockbox {

namespace {

// The error fd is needed before the options are known to be valid, to report their errors.
int find_error_fd(int argc, char** argv, int own_fd) {
  for (int i = 1; i + 1 < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--error-fd") {
      char* end = nullptr;
      long fd = std::strtol(argv[i + 1], &end, 10);
      if (end && *end == '\0' && fd >= 0 && fd < 1 << 20 && fd != own_fd &&
          fcntl(int(fd), F_GETFD) >= 0)
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

// An fd the caller named, made close-on-exec so that the block never inherits it; false when
// it is not open, or is the lockbox's own (Input::own_fd), as if it were not.
bool keep_from_block(int fd, int own_fd) {
  if (fd == own_fd) {
    errno = EBADF;
    return false;
  }
  return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

}  // namespace

int fail(const ErrorSink& sink, std::string_view step, int errnum, const std::string& message) {
  report(sink, setup_error(step, errnum, message));
  return kExitSetupFailed;
}

std::optional<int> read_input(int argc, char** argv, Input& input) {
  ErrorSink& sink = input.sink;
  sink = ErrorSink{find_error_fd(argc, argv, input.own_fd)};
  auto parsed = parse_options(argc, argv);
  if (!parsed.ok()) {
    int rc = fail(sink, "options", 0, parsed.error().message);
    if (sink.error_fd < 0) std::fputs("Try 'stackie-lockbox --help'.\n", stderr);
    return rc;
  }
  Options& options = input.options = std::move(*parsed);
  if (options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (options.version) {
    std::printf("%s\n", version_line("stackie-lockbox").c_str());
    return 0;
  }
  if (options.error_fd >= 0) {
    if (!keep_from_block(options.error_fd, input.own_fd))
      return fail(ErrorSink{}, "options", errno,
                  "--error-fd " + std::to_string(options.error_fd) + " is not open");
    sink.error_fd = options.error_fd;
  }
  if (options.policy_fd >= 0) {
    std::string json;
    if (options.policy_fd == input.own_fd) errno = EBADF;
    if (options.policy_fd == input.own_fd || !read_all(options.policy_fd, &json))
      return fail(sink, "policy", errno,
                  "read the policy from fd " + std::to_string(options.policy_fd));
    close(options.policy_fd);
    auto policy = policy_from_json(json);
    if (!policy.ok()) return fail(sink, "policy", 0, policy.error().message);
    options.policy = std::move(*policy);
  }
  if (options.print_policy) {
    std::printf("%s\n", policy_to_json(options.policy).c_str());
    return 0;
  }
  for (int fd : options.policy.pass_fds) {
    if (fd == input.own_fd || fcntl(fd, F_GETFD) < 0 || fd == sink.error_fd)
      return fail(sink, "options", EBADF, "pass fd " + std::to_string(fd) + " is not usable");
  }
  if (options.net_fd >= 0 && !keep_from_block(options.net_fd, input.own_fd))
    return fail(sink, "options", errno,
                "--net-fd " + std::to_string(options.net_fd) + " is not open");
  if (options.cgroup_fd >= 0 && !keep_from_block(options.cgroup_fd, input.own_fd))
    return fail(sink, "options", errno,
                "--cgroup-fd " + std::to_string(options.cgroup_fd) + " is not open");
  if (options.lifeline_fd >= 0 && !keep_from_block(options.lifeline_fd, input.own_fd))
    return fail(sink, "options", errno,
                "--lifeline-fd " + std::to_string(options.lifeline_fd) + " is not open");
  return std::nullopt;
}

}  // namespace stackie::lockbox
