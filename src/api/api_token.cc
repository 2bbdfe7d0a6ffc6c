#include "api/api_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>

namespace stackie::api {

namespace {

Error errno_error(const std::string& what) {
  int err = errno;
  return Error{-err, what + ": " + std::strerror(err)};
}

Result<std::string> read_token(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno_error(path);
  struct stat st {};
  std::string token;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return errno_error(path);
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    ::close(fd);
    return Error{UV_EPERM, path + ": the API token must be a regular file of yours with mode " +
                               "0600 (chmod 600 " + path + ", or remove it to get a new one)"};
  }
  char buffer[256];
  ssize_t got = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  if (got < 0) return errno_error(path);
  token.assign(buffer, static_cast<size_t>(got));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.size() < 32)
    return Error{UV_EINVAL, path +
                                ": the API token is shorter than 32 characters; remove the "
                                "file to get a new one"};
  return token;
}

}  // namespace

std::string token_path(const std::string& home) {
  return home + "/api.token";
}

Result<std::string> load_or_create_token(const std::string& home) {
  std::string path = token_path(home);
  unsigned char random[32];
  // libuv's portable getrandom(2) (Linux) / getentropy(3) (macOS); synchronous without a loop.
  if (int rc = uv_random(nullptr, nullptr, random, sizeof random, 0, nullptr); rc != 0)
    return Error{rc, std::string("random bytes for the API token: ") + uv_strerror(rc)};
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : random) {
    token += kHex[byte >> 4];
    token += kHex[byte & 15];
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return read_token(path);
    return errno_error(path);
  }
  std::string line = token + "\n";
  bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (::close(fd) != 0 || !written) {
    ::unlink(path.c_str());
    return Error{UV_EIO, path + ": could not write the API token"};
  }
  return token;
}

bool same_token(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^
                                       expected[i % (expected.size() ? expected.size() : 1)]);
  return diff == 0 && !expected.empty();
}

}  // namespace stackie::api
