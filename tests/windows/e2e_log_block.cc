// A first-party block for the Windows end-to-end test (e2e_test.sh): writes a numbered line to
// stdout every 200 ms, and one to stderr every ten, so that `stackie logs` has both streams to
// show. With an argument it prints that argument and the desktop it runs on (a sandboxed exec
// runs on the block's own desktop, "stackie-..."; one run outside the sandbox would not), then
// exits with status 7: what the test's `stackie exec` runs inside the block. `health` exits 0
// at once: the block's exec health check.
#include <windows.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "health") == 0) return 0;
  if (argc > 1) {
    char desktop[256] = "<unknown>";
    DWORD needed = 0;
    GetUserObjectInformationA(GetThreadDesktop(GetCurrentThreadId()), UOI_NAME, desktop,
                              sizeof desktop, &needed);
    std::printf("exec in the block: %s on desktop %s\n", argv[1], desktop);
    return 7;
  }
  for (int line = 1;; ++line) {
    std::printf("writer line %d\n", line);
    std::fflush(stdout);
    if (line % 10 == 0) {
      std::fprintf(stderr, "writer note %d\n", line);
      std::fflush(stderr);
    }
    Sleep(200);
  }
}
