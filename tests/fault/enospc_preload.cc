// LD_PRELOAD into the real stackied for the disk-full cases (issue 15 item 5): while the file
// named by STACKIE_TEST_ENOSPC_SWITCH exists, every write(2) to a file whose path contains
// STACKIE_TEST_ENOSPC_MATCH fails with ENOSPC, as on a full file system; everything else goes
// to the real write. Why this and not the alternatives: a small tmpfs needs privileges the
// unprivileged CI user lacks; RLIMIT_FSIZE fails with EFBIG (not ENOSPC) and SIGXFSZ, for every
// file of the daemon and of the blocks it starts, and only past an offset, so it cannot make
// the state file fail while the logs work (or the other way round). This changes only the
// kernel's answer to the writes under test, in the unmodified daemon binary.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using WriteFn = ssize_t (*)(int, const void*, size_t);

bool should_fail(int fd) {
  const char* match = std::getenv("STACKIE_TEST_ENOSPC_MATCH");
  const char* toggle = std::getenv("STACKIE_TEST_ENOSPC_SWITCH");
  if (match == nullptr || toggle == nullptr || ::access(toggle, F_OK) != 0) return false;
  char link[64], path[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return std::strstr(path, match) != nullptr;
}

}  // namespace

extern "C" ssize_t write(int fd, const void* data, size_t size) {
  static WriteFn real = reinterpret_cast<WriteFn>(dlsym(RTLD_NEXT, "write"));
  if (should_fail(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return real(fd, data, size);
}
