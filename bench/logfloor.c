/* bench-logfloor LOG_DIR N SPEW BYTES RESULTS GO: the floor of a logger that writes files.
 * Starts N copies of bench-spew (SPEW BYTES/N RESULTS/I GO), each with its stdout on a pipe of
 * 1 MiB, and copies what each writes, as it comes, into LOG_DIR/sI.log, rotated as bench/logs
 * rotates for every system (10 MiB, 4 older files kept): one thread, one read of up to 1 MiB
 * and one write per wake-up, and nothing done per line (no stamp, no line found). What it
 * reaches is what a single-threaded logger writing files can reach on this machine; bench/logs
 * shows it as the system "floor". Runs until killed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

enum { kMaxBlocks = 64, kRead = 1 << 20, kFileMax = 10 << 20, kKept = 4 };

struct block {
  int pipe;
  int file;
  long long size;
  char path[4096];
};

static int open_log(struct block* b) {
  b->file = open(b->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  b->size = 0;
  return b->file;
}

/* sI.log -> sI.log.1 -> ... -> sI.log.4, the oldest removed: as supervisord and stackied do. */
static int rotate(struct block* b) {
  char from[4200], to[4200];
  close(b->file);
  snprintf(to, sizeof to, "%s.%d", b->path, kKept);
  unlink(to);
  for (int i = kKept - 1; i >= 1; --i) {
    snprintf(from, sizeof from, "%s.%d", b->path, i);
    snprintf(to, sizeof to, "%s.%d", b->path, i + 1);
    rename(from, to);
  }
  snprintf(to, sizeof to, "%s.1", b->path);
  rename(b->path, to);
  return open_log(b);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: bench-logfloor LOG_DIR N SPEW BYTES RESULTS GO\n");
    return 2;
  }
  int n = atoi(argv[2]);
  if (n < 1 || n > kMaxBlocks) return 2;
  static struct block blocks[kMaxBlocks];
  int poller = epoll_create1(EPOLL_CLOEXEC);
  for (int i = 0; i < n; ++i) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return 1;
    fcntl(ends[0], F_SETPIPE_SZ, kRead);
    pid_t child = fork();
    if (child == 0) {
      char bytes[32], result[4200];
      snprintf(bytes, sizeof bytes, "%lld", atoll(argv[4]) / n);
      snprintf(result, sizeof result, "%s/%d", argv[5], i);
      dup2(ends[1], 1);
      execl(argv[3], argv[3], bytes, result, argv[6], (char*)NULL);
      _exit(127);
    }
    close(ends[1]);
    blocks[i].pipe = ends[0];
    snprintf(blocks[i].path, sizeof blocks[i].path, "%s/s%d.log", argv[1], i);
    if (open_log(&blocks[i]) < 0) return 1;
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = &blocks[i]};
    epoll_ctl(poller, EPOLL_CTL_ADD, ends[0], &event);
  }
  static char buffer[kRead];
  for (;;) {
    struct epoll_event ready[kMaxBlocks];
    int count = epoll_wait(poller, ready, kMaxBlocks, -1);
    for (int i = 0; i < count; ++i) {
      struct block* b = ready[i].data.ptr;
      ssize_t got = read(b->pipe, buffer, kRead);
      if (got <= 0) {
        epoll_ctl(poller, EPOLL_CTL_DEL, b->pipe, NULL);
        continue;
      }
      if (write(b->file, buffer, (size_t)got) != got) return 1;
      b->size += got;
      if (b->size >= kFileMax && rotate(b) < 0) return 1;
    }
  }
}
