// `stackie-lockbox` on macOS (DESIGN.md §5b): the same edge as on Linux (lockbox_input.h: the
// options, the policy fd), then the Seatbelt monitor (sandbox/seatbelt_launch.h).
#include <cstdio>

#include "sandbox/lockbox_input.h"
#include "sandbox/seatbelt_launch.h"

int main(int argc, char** argv) {
  using stackie::lockbox::fail;
  stackie::lockbox::Input input;
  if (auto done = stackie::lockbox::read_input(argc, argv, input)) return *done;
  stackie::lockbox::Options& options = input.options;
  if (options.print_backend) {
    std::printf("seatbelt\n");
    return 0;
  }
  // Linux-only features: say so rather than run the block with less than was asked.
  if (options.backend != "auto")
    return fail(input.sink, "options", 0,
                "--backend " + options.backend + " is a Linux backend; macOS has Seatbelt only");
  if (options.join_pid != 0)
    return fail(input.sink, "options", 0,
                "--join needs Linux namespaces; on macOS run the command with the block's "
                "policy options instead (the daemon's exec does)");
  if (options.net_fd >= 0 || !options.listen_ports.empty())
    return fail(input.sink, "options", 0,
                "--net-fd and --listen need a network namespace; on macOS --allow-bind and "
                "--allow-connect confine the shared loopback");
  if (options.cgroup_fd >= 0)
    return fail(input.sink, "options", 0, "--cgroup-fd needs Linux cgroups v2");
  if (options.exit_with_pid != 0)
    return fail(input.sink, "options", 0, "--exit-with is for the Windows lockbox");
  if (options.cpus_given)
    return fail(input.sink, "options", 0, "--cpus is for the Windows lockbox");
  if (options.stop_fd >= 0)
    return fail(input.sink, "options", 0, "--stop-fd is for the Windows lockbox");
  stackie::seatbelt::LaunchRequest request{std::move(options.policy), std::move(options.command),
                                           input.sink, options.lifeline_fd};
  return stackie::seatbelt::run_sandboxed(request);
}
