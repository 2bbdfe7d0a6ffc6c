#include "api/api_token.h"

#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>

#include "base/safe_open.h"

namespace stackie::api {

namespace {

constexpr char kTokenName[] = "api.token";

// The token file, opened in the home without following a link planted in its place.
Result<std::string> read_token(int home, const std::string& path, const std::string& home_shown) {
  STACKIE_TRY_ASSIGN(fd, open_file_in(home, kTokenName, O_RDONLY, home_shown));
  if (auto private_file = check_private_file(fd.get(), path); !private_file.ok())
    return Error{UV_EPERM, private_file.error().message + ": the API token must be yours alone " +
                               "(or remove it to get a new one)"};
  char buffer[256];
  ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
  if (got < 0) return system_error(errno, "read " + path);
  std::string token(buffer, static_cast<size_t>(got));
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
  STACKIE_TRY_ASSIGN(dir, open_directory(home));
  auto created = open_file_in(dir.get(), kTokenName, O_WRONLY | O_CREAT | O_EXCL, home);
  if (!created.ok()) {
    if (created.error().code == -EEXIST) return read_token(dir.get(), path, home);
    return created.take_error();
  }
  // Before the secret is in it: the home's DACL may pass on more than the user (Windows).
  if (auto made_private = make_private_file(created->get(), path); !made_private.ok()) {
    (void)remove_file_in(dir.get(), kTokenName, home);
    return made_private.error();
  }
  if (auto written = write_and_sync(created->get(), token + "\n", path); !written.ok()) {
    (void)remove_file_in(dir.get(), kTokenName, home);
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
