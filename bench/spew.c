/* bench-spew BYTES RESULT_FILE [GO_FILE]: waits until GO_FILE exists (so that every supervisor
 * under test has its blocks up and its followers attached before the flood), writes BYTES of
 * 100-byte lines to stdout as fast as the reader takes them, then writes
 * "START_NS END_NS BYTES DRAINED_NS" (CLOCK_REALTIME) to RESULT_FILE and waits forever (so that
 * no supervisor restarts it). END is when the last write returned: BYTES / (END - START) is the
 * rate the block saw. What is still unread then is as much as the reader's pipe holds, 64 KiB
 * for supervisord and up to 1 MiB for stackied, whose pipes grow under a flood; DRAINED is when
 * the reader had taken the last byte (the pipe or socket holds none), so that
 * BYTES / (DRAINED - START) compares readers with pipes of different sizes fairly. */
#include <linux/sockios.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bytes written to fd 1 that its reader has not taken yet; 0 when that cannot be asked. */
static int unread(void) {
  struct stat st;
  int queued = 0;
  if (fstat(1, &st) != 0) return 0;
  /* A pipe counts its bytes from either end; a socket's unread bytes are its send queue. */
  if (ioctl(1, S_ISSOCK(st.st_mode) ? SIOCOUTQ : FIONREAD, &queued) != 0) return 0;
  return queued;
}

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
  long long end = now_ns(), drained = end;
  for (int polls = 0; polls < 200000 && unread() > 0; ++polls) usleep(50); /* at most ~10 s */
  drained = now_ns();
  FILE* out = fopen(argv[2], "w");
  if (out == NULL) return 1;
  fprintf(out, "%lld %lld %lld %lld\n", start, end, total, drained);
  fclose(out);
  for (;;) pause();
}
