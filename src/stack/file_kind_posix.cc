#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>

#include "stack/file_kind.h"

namespace stackie {

bool is_file_or_directory_itself(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && (S_ISREG(info.st_mode) || S_ISDIR(info.st_mode));
}

bool is_link(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
}

namespace {

// The file system's handle of `path` itself (inode and generation on ext4, tmpfs, xfs), hex;
// "" where there is none.
std::string file_handle_hex(const std::string& path) {
#ifdef __linux__
  alignas(struct file_handle) unsigned char buffer[sizeof(struct file_handle) + MAX_HANDLE_SZ];
  auto* head = reinterpret_cast<struct file_handle*>(buffer);
  head->handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, path.c_str(), head, &mount_id, 0) != 0) return "";
  const unsigned char* bytes = buffer + offsetof(struct file_handle, f_handle);
  static const char kHex[] = "0123456789abcdef";
  std::string out = std::to_string(head->handle_type) + ":";
  for (unsigned i = 0; i < head->handle_bytes && i < MAX_HANDLE_SZ; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
#else
  (void)path;
  return "";
#endif
}

}  // namespace

std::optional<FileIdentity> file_identity(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0)
    return FileIdentity{static_cast<unsigned long long>(info.st_dev),
                        static_cast<unsigned long long>(info.st_ino), file_handle_hex(path)};
  if (errno == ENOENT) return std::nullopt;
  return FileIdentity{};  // there, but not to be looked at (EACCES on the way)
}

bool is_missing(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) != 0 && errno == ENOENT;
}

std::string resolved_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer)) return buffer;
  return path;
}

}  // namespace stackie
