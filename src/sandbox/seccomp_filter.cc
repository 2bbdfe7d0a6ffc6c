// Loads the filter compiled at build time by seccomp_gen.cc (DESIGN.md §5.6).
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include <cerrno>

#include "sandbox/linux_lockdown.h"
#include "seccomp_filter_bpf.h"

namespace stackie::linux_sandbox {

int load_seccomp_filter() {
  sock_fprog program{
      static_cast<unsigned short>(sizeof kLockboxSeccompProgram / sizeof kLockboxSeccompProgram[0]),
      const_cast<sock_filter*>(kLockboxSeccompProgram)};
  // Requires no_new_privs (set just before) since we hold no CAP_SYS_ADMIN in the init ns.
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) return errno;
  return 0;
}

int load_unix_socket_filter() {
  sock_fprog program{static_cast<unsigned short>(sizeof kUnixSocketSeccompProgram /
                                                 sizeof kUnixSocketSeccompProgram[0]),
                     const_cast<sock_filter*>(kUnixSocketSeccompProgram)};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace stackie::linux_sandbox
