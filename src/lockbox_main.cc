// `stackie-lockbox` on Linux: the sandbox launcher (DESIGN.md §1, §5). The edge (options, the
// policy fd) is lockbox_input.h, shared with the macOS main; then the Linux backend takes over
// and reports its own setup failures on the error fd.
#include <cstdio>
#include <cstring>
#include <string>

#include "base/sandbox_probe.h"
#include "sandbox/linux_init_ahead.h"
#include "sandbox/linux_landlock.h"
#include "sandbox/linux_launch.h"
#include "sandbox/linux_namespaces.h"
#include "sandbox/linux_zygote.h"
#include "sandbox/lockbox_input.h"
#include "sandbox/zygote_protocol.h"

namespace {

int run_lockbox(int argc, char** argv) {
  stackie::lockbox::Input input;
  input.own_fd = stackie::linux_sandbox::init_ahead().sock;
  if (auto done = stackie::lockbox::read_input(argc, argv, input)) return *done;
  stackie::lockbox::Options& options = input.options;
  if (options.print_backend) {
    stackie::BackendChoice choice = stackie::choose_linux_backend();
    std::printf("%s\n", std::string(stackie::to_string(choice.backend)).c_str());
    std::printf("landlock ABI %d (%s)\n", choice.landlock_abi,
                stackie::linux_sandbox::landlock_features(choice.landlock_abi).c_str());
    if (!choice.reason.empty()) std::printf("why: %s\n", choice.reason.c_str());
    return 0;
  }
  if (options.exit_with_pid != 0)
    return stackie::lockbox::fail(input.sink, "options", 0,
                                  "--exit-with is for the Windows lockbox (on Linux a command run "
                                  "in a block is in its pid namespace and dies with it)");
  if (options.cpus_given)
    return stackie::lockbox::fail(input.sink, "options", 0,
                                  "--cpus is for the Windows lockbox (on Linux the block's cgroup "
                                  "carries its CPU limit; no rlimit can stand in)");
  if (options.stop_fd >= 0)
    return stackie::lockbox::fail(input.sink, "options", 0,
                                  "--stop-fd is for the Windows lockbox (on Linux the daemon "
                                  "signals the block's monitor)");
  if (options.lifeline_fd >= 0)
    return stackie::lockbox::fail(input.sink, "options", 0,
                                  "--lifeline-fd is for the macOS lockbox (on Linux the block "
                                  "dies with its pid namespace)");
  // A zygote's spare that made namespaces ahead (sandbox/zygote_protocol.h) is for the
  // namespace lockbox only; the daemon asks it for nothing else, and nothing else may run there.
  if (stackie::linux_sandbox::namespaces_made_ahead() &&
      (options.backend != "namespaces" || options.join_pid != 0 || options.cgroup_fd >= 0))
    return stackie::lockbox::fail(input.sink, "options", 0,
                                  "namespaces made ahead by the zygote are for --backend "
                                  "namespaces only, without --join or --cgroup-fd");
  stackie::linux_sandbox::LaunchRequest request{std::move(options.policy),
                                                std::move(options.command),
                                                input.sink,
                                                {options.net_fd, std::move(options.listen_ports)},
                                                options.cgroup_fd};
  if (options.join_pid != 0) return stackie::linux_sandbox::join_sandbox(options.join_pid, request);
  // auto: the namespace lockbox where this host allows it (one probe fork), else landlock.
  bool landlock = options.backend == "landlock" ||
                  (options.backend == "auto" &&
                   stackie::choose_linux_backend().backend == stackie::LinuxBackend::landlock);
  if (landlock) return stackie::linux_sandbox::run_landlocked(request);
  const int code = stackie::linux_sandbox::run_sandboxed(request);
  // run_sandboxed returns once pid 1 is reaped, and every process of its pid namespace went
  // with it: a zygote's monitor says so before its own exit (zygote_protocol.h). Not one in the
  // block's cgroup: told, the daemon removes that cgroup, which this process would still hold.
  if (request.cgroup_fd < 0) stackie::linux_sandbox::report_sandbox_gone(code);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // The clone point (sandbox/zygote_protocol.h): the daemon's spawn requests on fd 3, each
  // forked into a monitor that runs run_lockbox as an exec'd lockbox would.
  if (argc == 2 && std::strcmp(argv[1], "--zygote") == 0)
    return stackie::linux_sandbox::serve_zygote(stackie::zygote::kSocketFd, run_lockbox);
  return run_lockbox(argc, argv);
}
