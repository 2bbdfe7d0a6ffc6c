/* bench-listener PORT: listens on 127.0.0.1:PORT, accepts and closes connections, forever.
 * The program every "up" block runs, the same for stackie and its peers: it starts in well
 * under a millisecond, so what the benchmark sees is the supervisor, not the service. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bench-listener PORT\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)atoi(argv[1]));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(fd, 128) != 0) {
    perror("bench-listener: bind/listen");
    return 1;
  }
  for (;;) {
    int c = accept(fd, NULL, NULL);
    if (c >= 0) close(c);
  }
}
