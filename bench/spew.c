/* bench-spew BYTES RESULT_FILE [GO_FILE]: waits until GO_FILE exists (so that every supervisor
 * under test has its blocks up and its followers attached before the flood), writes BYTES of
 * 100-byte lines to stdout as fast as the reader takes them, then writes "START_NS END_NS BYTES" (CLOCK_REALTIME) to RESULT_FILE and waits
 * forever (so that no supervisor restarts it). END is when the last write returned: at most a
 * pipe buffer (64 KiB) is still unread then, so BYTES / (END - START) is the rate the block saw. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: bench-spew BYTES RESULT_FILE [GO_FILE]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_DFL);
  long long total = atoll(argv[1]) / 100 * 100;
  enum { kLine = 100, kLines = 655 };  /* 65500 bytes a write */
  static char buf[kLine * kLines];
  for (int i = 0; i < kLines; ++i) {
    char* line = buf + i * kLine;
    memset(line, 'x', kLine - 1);
    memcpy(line, "bench-spew line ", 16);
    line[kLine - 1] = '\n';
  }
  if (argc == 4)
    while (access(argv[3], F_OK) != 0) usleep(1000);
  long long start = now_ns(), left = total;
  while (left > 0) {
    size_t want = left < (long long)sizeof buf ? (size_t)left : sizeof buf;
    ssize_t n = write(1, buf, want);
    if (n <= 0) return 1;
    left -= n;
    /* A partial write leaves the next one starting mid-line: re-align the buffer's phase. */
    if (n % kLine != 0) {
      size_t done = (size_t)n;
      while (done % kLine != 0) {
        ssize_t m = write(1, buf + done, kLine - done % kLine);
        if (m <= 0) return 1;
        done += (size_t)m;
        left -= m;
      }
    }
  }
  long long end = now_ns();
  FILE* out = fopen(argv[2], "w");
  if (out == NULL) return 1;
  fprintf(out, "%lld %lld %lld\n", start, end, total);
  fclose(out);
  for (;;) pause();
}
