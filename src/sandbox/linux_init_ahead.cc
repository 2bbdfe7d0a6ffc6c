#include "sandbox/linux_init_ahead.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "sandbox/zygote_protocol.h"

namespace stackie::linux_sandbox {
namespace {

constexpr uint32_t kMagic = 0x31544e49;  // "INT1"
// The policy may be up to 16 MiB (lockbox_input.cc); the command and the numbers are small.
constexpr uint32_t kMaxBody = (16u << 20) + (1u << 20);

struct Header {
  uint32_t magic;
  uint32_t body_size;
  uint32_t fd_count;
};

void put_u32(std::string& out, uint32_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void put_string(std::string& out, const std::string& text) {
  put_u32(out, static_cast<uint32_t>(text.size()));
  out += text;
}

// Reads what put_u32 and put_string wrote; any read past the end fails the whole.
struct Reader {
  const std::string& bytes;
  size_t at = 0;
  bool ok = true;

  uint32_t u32() {
    uint32_t value = 0;
    if (bytes.size() - at < sizeof value) {
      ok = false;
      return 0;
    }
    std::memcpy(&value, bytes.data() + at, sizeof value);
    at += sizeof value;
    return value;
  }
  std::string string() {
    const uint32_t size = u32();
    if (!ok || bytes.size() - at < size) {
      ok = false;
      return {};
    }
    std::string text = bytes.substr(at, size);
    at += size;
    return text;
  }
};

// The block's fds as the monitor numbers them: its stdio, then --pass-fd. The error fd goes too
// (pid 1 reports on it until the block runs) and keeps its close-on-exec there.
std::vector<int> fds_of(const LaunchRequest& request) {
  std::vector<int> fds = {0, 1, 2};
  if (request.sink.error_fd >= 0) fds.push_back(request.sink.error_fd);
  for (int fd : request.policy.pass_fds) fds.push_back(fd);
  std::sort(fds.begin(), fds.end());
  fds.erase(std::unique(fds.begin(), fds.end()), fds.end());
  return fds;
}

bool write_all(int sock, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(sock, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes into `out`, keeping every fd that comes with them.
bool read_exactly(int sock, char* out, size_t size, std::vector<int>& fds) {
  while (size > 0) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * zygote::kMaxFds)];
    iovec io{out, size};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n = recvmsg(sock, &message, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) zygote::take_passed_fds(message, fds);
    if (n <= 0 || (message.msg_flags & MSG_CTRUNC)) return false;
    out += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Puts received[i] at targets[i]. Everything is moved above the highest target first, `*sock`
// included, so that no dup2 lands on a descriptor still to be placed.
bool place(std::vector<int>& received, const std::vector<int>& targets, int* sock) {
  const int above = *std::max_element(targets.begin(), targets.end()) + 1;
  auto move_up = [above](int* fd) {
    const int moved = fcntl(*fd, F_DUPFD_CLOEXEC, above);
    close(*fd);
    *fd = moved;
    return moved >= 0;
  };
  if (!move_up(sock)) return false;
  for (int& fd : received)
    if (!move_up(&fd)) return false;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (dup2(received[i], targets[i]) < 0) return false;  // dup2 clears close-on-exec
    close(received[i]);
    received[i] = targets[i];
  }
  return true;
}

}  // namespace

InitAhead& init_ahead() {
  static InitAhead init;
  return init;
}

std::optional<SetupError> hand_over(const InitAhead& init, const LaunchRequest& request) {
  const std::vector<int> fds = fds_of(request);
  if (std::find(fds.begin(), fds.end(), init.sock) != fds.end())
    return setup_error(
        "options", EBADF,
        "fd " + std::to_string(init.sock) + " is the lockbox's own (pid 1's socket)");
  if (fds.size() > zygote::kMaxFds)
    return setup_error("options", EINVAL, "more fds than a zygote's request may carry");
  std::string body;
  put_u32(body, static_cast<uint32_t>(request.sink.error_fd));
  for (int fd : fds) put_u32(body, static_cast<uint32_t>(fd));
  put_u32(body, static_cast<uint32_t>(request.command.size()));
  for (const std::string& arg : request.command) put_string(body, arg);
  put_string(body, policy_to_json(request.policy));
  if (body.size() > kMaxBody) return setup_error("fork", EFBIG, "hand the request to pid 1");
  const Header header{kMagic, static_cast<uint32_t>(body.size()),
                      static_cast<uint32_t>(fds.size())};
  if (zygote::send_datagram(init.sock, &header, sizeof header, fds.data(), fds.size()) !=
          static_cast<ssize_t>(sizeof header) ||
      !write_all(init.sock, body.data(), body.size()))
    return setup_error("fork", errno, "hand the request to pid 1 (made ahead; it is gone)");
  return std::nullopt;
}

std::optional<LaunchRequest> receive_hand_over(int* sock) {
  Header header{};
  std::vector<int> fds;
  auto give_up = [&fds]() -> std::optional<LaunchRequest> {
    for (int fd : fds) close(fd);
    return std::nullopt;
  };
  if (!read_exactly(*sock, reinterpret_cast<char*>(&header), sizeof header, fds) ||
      header.magic != kMagic || header.body_size > kMaxBody || fds.size() != header.fd_count ||
      header.fd_count < 3)
    return give_up();
  std::string body(header.body_size, '\0');
  if (!read_exactly(*sock, body.data(), body.size(), fds) || fds.size() != header.fd_count)
    return give_up();

  Reader reader{body};
  const int error_fd = static_cast<int>(reader.u32());
  std::vector<int> targets;
  for (uint32_t i = 0; i < header.fd_count; ++i) targets.push_back(static_cast<int>(reader.u32()));
  const uint32_t argc = reader.u32();
  if (argc > body.size() / 4) return give_up();  // each argument takes its size's 4 bytes
  std::vector<std::string> command(argc);
  for (std::string& arg : command) arg = reader.string();
  const std::string json = reader.string();
  if (!reader.ok || reader.at != body.size() || command.empty()) return give_up();
  for (int target : targets)
    if (target < 0) return give_up();
  if (!place(fds, targets, sock)) return give_up();
  const ErrorSink sink{error_fd};
  if (error_fd >= 0 && fcntl(error_fd, F_SETFD, FD_CLOEXEC) != 0) return give_up();
  // From here on the monitor has let go of the error fd: what fails is said there.
  auto policy = policy_from_json(json);
  if (!policy.ok()) {
    report(sink,
           setup_error("policy", 0,
                       "pid 1 (forked ahead) cannot read the policy: " + policy.error().message));
    return give_up();
  }
  LaunchRequest request{std::move(*policy), std::move(command), sink, {}, -1};
  return request;
}

}  // namespace stackie::linux_sandbox
