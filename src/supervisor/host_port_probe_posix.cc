// host_ports.h's probes of the host, Linux and macOS: a test bind on 127.0.0.1, and who
// holds a port from /proc (Linux; nothing to say elsewhere).
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "base/posix_io.h"
#include "supervisor/host_ports.h"

namespace stackie {
namespace {

// Socket inodes listening on `port` (state 0A = LISTEN) in /proc/net/tcp and tcp6.
std::vector<std::string> listening_inodes(int port) {
  std::vector<std::string> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      size_t colon = local.rfind(':');
      if (colon == std::string::npos || state != "0A") continue;
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) inodes.push_back(inode);
    }
  }
  return inodes;
}

}  // namespace

bool host_port_free(int port) {
  int fd = socket_cloexec(AF_INET, SOCK_STREAM);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as the forwarder binds
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return free;
}

std::string port_holder(int port) {
  std::vector<std::string> inodes = listening_inodes(port);
  if (inodes.empty()) return "";
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return "";
  std::string found;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::string fd_dir = std::string("/proc/") + entry->d_name + "/fd";
    DIR* fds = ::opendir(fd_dir.c_str());
    if (fds == nullptr) continue;  // another user's process
    while (dirent* fd = ::readdir(fds)) {
      char target[64];
      std::string link = fd_dir + "/" + fd->d_name;
      ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      std::string text(target, static_cast<size_t>(n));
      for (const auto& inode : inodes)
        if (text == "socket:[" + inode + "]") found = entry->d_name;
      if (!found.empty()) break;
    }
    ::closedir(fds);
    if (!found.empty()) break;
  }
  ::closedir(proc);
  if (found.empty()) return "";
  std::ifstream comm("/proc/" + found + "/comm");
  std::string name;
  std::getline(comm, name);
  return "pid " + found + (name.empty() ? "" : " (" + name + ")");
}

}  // namespace stackie
