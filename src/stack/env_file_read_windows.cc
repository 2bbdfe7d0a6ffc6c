// read_env_file on Windows. There is no openat here: the file is opened by its path, then the
// handle's final path (what Windows really opened, after every junction and symlink) must be the
// trusted directory's own final path followed by the same components. A junction a block planted
// on the way leads elsewhere and is refused, with no window between a check and the open. The
// file itself is opened as the reparse point it may be (FILE_FLAG_OPEN_REPARSE_POINT) and refused
// if it is one, or if its final path is not its own directory's plus its name, below the
// directory or not.
#include <windows.h>

#include <cerrno>

#include "base/windows_text.h"
#include "stack/env_file.h"

namespace stackie {

namespace {

class Handle {
 public:
  explicit Handle(HANDLE handle) : handle_(handle) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (valid()) CloseHandle(handle_);
  }
  HANDLE get() const { return handle_; }
  bool valid() const { return handle_ != INVALID_HANDLE_VALUE; }

 private:
  HANDLE handle_;
};

HANDLE open_for_reading(const std::string& path, DWORD flags) {
  return CreateFileW(widen(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                     OPEN_EXISTING, flags, nullptr);
}

Result<std::wstring> final_path(HANDLE handle, const std::string& what) {
  std::wstring out(MAX_PATH, L'\0');
  for (;;) {
    DWORD n = GetFinalPathNameByHandleW(handle, out.data(), static_cast<DWORD>(out.size()),
                                        FILE_NAME_NORMALIZED);
    if (n == 0) return windows_error(what + ": cannot resolve its path");
    if (n < out.size()) {
      out.resize(n);
      return out;
    }
    out.resize(n + 1);
  }
}

Result<std::wstring> final_path_of_dir(const std::string& dir, const std::string& path) {
  Handle handle(open_for_reading(dir, FILE_FLAG_BACKUP_SEMANTICS));
  if (!handle.valid()) return windows_error(path + ": cannot read: open " + dir);
  return final_path(handle.get(), dir);
}

bool same_path(const std::wstring& a, const std::wstring& b) {
  return CompareStringOrdinal(a.data(), static_cast<int>(a.size()), b.data(),
                              static_cast<int>(b.size()), TRUE) == CSTR_EQUAL;
}

}  // namespace

Result<std::string> read_env_file(const std::string& path, const std::string& trusted_dir) {
  Handle file(open_for_reading(path, FILE_FLAG_OPEN_REPARSE_POINT));
  if (!file.valid()) {
    DWORD code = GetLastError();
    Error error = windows_error(path + ": cannot read", code);
    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) error.code = -ENOENT;
    // A directory cannot be opened without FILE_FLAG_BACKUP_SEMANTICS: say what it is.
    DWORD attributes = GetFileAttributesW(widen(path).c_str());
    if (code == ERROR_ACCESS_DENIED && attributes != INVALID_FILE_ATTRIBUTES &&
        (attributes & FILE_ATTRIBUTE_DIRECTORY))
      return Error{-EINVAL, path + ": not a regular file"};
    return error;
  }
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(file.get(), &info)) return windows_error(path + ": cannot read");
  if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
    return Error{-ELOOP, path + ": cannot read: it is a symlink (name the file it points to)"};
  if (GetFileType(file.get()) != FILE_TYPE_DISK ||
      (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
    return Error{-EINVAL, path + ": not a regular file"};
  if (info.nFileSizeHigh != 0 || info.nFileSizeLow > kMaxEnvFileSize)
    return Error{-EFBIG, path + ": larger than 1 MiB; not an env file"};

  // Where the handle really leads, against where its directory (and the trusted one) leads:
  // a symlink Windows does not flag as a reparse point (Wine shows a Unix symlink as a plain
  // file) is still caught by its final path.
  STACKIE_TRY_ASSIGN(file_final, final_path(file.get(), path));
  const size_t slash = path.rfind('/');
  std::string parent = path.substr(0, slash);
  if (parent.empty() || parent.back() == ':') parent += '/';  // "C:" alone is C:'s current dir
  STACKIE_TRY_ASSIGN(parent_final, final_path_of_dir(parent, path));
  if (parent_final.empty() || parent_final.back() != L'\\') parent_final += L'\\';
  if (!same_path(parent_final + widen(path.substr(slash + 1)), file_final))
    return Error{-ELOOP, path + ": cannot read: it is a symlink (name the file it points to)"};
  if (path.size() > trusted_dir.size() && path.compare(0, trusted_dir.size(), trusted_dir) == 0 &&
      path[trusted_dir.size()] == '/') {
    STACKIE_TRY_ASSIGN(dir_final, final_path_of_dir(trusted_dir, path));
    std::wstring expected = dir_final + widen(path.substr(trusted_dir.size()));
    for (auto& c : expected)
      if (c == L'/') c = L'\\';
    if (!same_path(expected, file_final))
      return Error{-ELOOP, path + ": cannot read: a symlink or junction on the way leads to " +
                               narrow_path(file_final)};
  }

  std::string text;
  char buffer[8192];
  while (text.size() <= kMaxEnvFileSize) {
    DWORD got = 0;
    if (!ReadFile(file.get(), buffer, sizeof buffer, &got, nullptr))
      return windows_error(path + ": cannot read");
    if (got == 0) return text;
    text.append(buffer, got);
  }
  return Error{-EFBIG, path + ": larger than 1 MiB; not an env file"};
}

}  // namespace stackie
