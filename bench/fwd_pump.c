/* bench/forward's traffic: `fwd_pump serve PORT` counts what each client sends and answers
 * with the count; `fwd_pump send HOST PORT BYTES` sends BYTES in 256 KiB writes, half-closes,
 * waits for the count and prints the throughput in MB/s. Plain C: the pump must never be
 * what limits the measurement. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (256 * 1024)
static char buffer[CHUNK];

static struct sockaddr_in address_of(const char* host, int port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  inet_pton(AF_INET, host, &a.sin_addr);
  return a;
}

static int serve(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = address_of("127.0.0.1", port);
  if (bind(l, (struct sockaddr*)&a, sizeof a) || listen(l, 16)) { perror("listen"); return 1; }
  for (;;) {
    int c = accept(l, NULL, NULL);
    if (c < 0) continue;
    long long total = 0;
    ssize_t n;
    while ((n = read(c, buffer, CHUNK)) > 0) total += n;
    char reply[64];
    int len = snprintf(reply, sizeof reply, "%lld\n", total);
    if (write(c, reply, (size_t)len) != len) perror("reply");
    close(c);
  }
}

static int send_bytes(const char* host, int port, long long bytes) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = address_of(host, port);
  if (connect(s, (struct sockaddr*)&a, sizeof a)) { perror("connect"); return 1; }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long long left = bytes;
  while (left > 0) {
    ssize_t n = write(s, buffer, left < CHUNK ? (size_t)left : CHUNK);
    if (n <= 0) { perror("write"); return 1; }
    left -= n;
  }
  shutdown(s, SHUT_WR);
  char reply[64] = {0};
  ssize_t n = read(s, reply, sizeof reply - 1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (n <= 0 || atoll(reply) != bytes) { fprintf(stderr, "short count: %s\n", reply); return 1; }
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("%.1f\n", (double)bytes / seconds / 1e6);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "serve") == 0) return serve(atoi(argv[2]));
  if (argc == 5 && strcmp(argv[1], "send") == 0)
    return send_bytes(argv[2], atoi(argv[3]), atoll(argv[4]));
  fprintf(stderr, "usage: fwd_pump serve PORT | send HOST PORT BYTES\n");
  return 2;
}
