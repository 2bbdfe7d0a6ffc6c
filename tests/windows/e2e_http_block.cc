// A first-party block for the Windows end-to-end test (e2e_test.sh): a tiny HTTP server on
// 127.0.0.1:PORT (argv[1]) that answers every request with one line naming itself and the
// request's path, and logs each request to stdout. Plain Winsock, one connection at a time:
// it stands in for a developer's own API, not for a web server.
#include <winsock2.h>
#include <ws2tcpip.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: e2e-http-block PORT\n");
    return 2;
  }
  WSADATA wsa;
  if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) return 1;
  SOCKET listener = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<u_short>(std::atoi(argv[1])));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listener == INVALID_SOCKET ||
      bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener, 16) != 0) {
    std::fprintf(stderr, "e2e-http-block: cannot listen on 127.0.0.1:%s (%d)\n", argv[1],
                 WSAGetLastError());
    return 1;
  }
  std::printf("e2e-http-block listening on 127.0.0.1:%s\n", argv[1]);
  std::fflush(stdout);
  for (;;) {
    SOCKET client = accept(listener, nullptr, nullptr);
    if (client == INVALID_SOCKET) continue;
    std::string request;
    char buffer[2048];
    int got;
    while (request.find("\r\n\r\n") == std::string::npos &&
           (got = recv(client, buffer, sizeof buffer, 0)) > 0)
      request.append(buffer, static_cast<size_t>(got));
    std::string path = "/";
    if (size_t space = request.find(' '); space != std::string::npos)
      path = request.substr(space + 1, request.find(' ', space + 1) - space - 1);
    std::string body = "hello from the windows block, path " + path + "\n";
    std::string response = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    send(client, response.data(), static_cast<int>(response.size()), 0);
    shutdown(client, SD_SEND);
    closesocket(client);
    std::printf("served %s\n", path.c_str());
    std::fflush(stdout);
  }
}
