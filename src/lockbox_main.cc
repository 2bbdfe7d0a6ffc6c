// `stackie-lockbox` on Linux: the sandbox launcher (DESIGN.md §1, §5). The edge (options, the
// policy fd) is lockbox_input.h, shared with the macOS main; then the Linux backend takes over
// and reports its own setup failures on the error fd.
#include "sandbox/linux_launch.h"
#include "sandbox/lockbox_input.h"

int main(int argc, char** argv) {
  stackie::lockbox::Input input;
  if (auto done = stackie::lockbox::read_input(argc, argv, input)) return *done;
  stackie::lockbox::Options& options = input.options;
  if (options.lifeline_fd >= 0)
    return stackie::lockbox::fail(input.sink, "options", 0,
                                  "--lifeline-fd is for the macOS lockbox (on Linux the block "
                                  "dies with its pid namespace)");
  stackie::linux_sandbox::LaunchRequest request{std::move(options.policy),
                                                std::move(options.command),
                                                input.sink,
                                                {options.net_fd, std::move(options.listen_ports)},
                                                options.cgroup_fd};
  if (options.join_pid != 0) return stackie::linux_sandbox::join_sandbox(options.join_pid, request);
  return stackie::linux_sandbox::run_sandboxed(request);
}
