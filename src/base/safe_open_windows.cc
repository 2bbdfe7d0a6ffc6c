// safe_open.h on Windows (issue 18). What a block can plant in its storage here is a reparse
// point: a symlink or a junction (a mount point), which Windows follows unless told not to. So
// every component is opened relative to its parent's HANDLE (NtCreateFile with RootDirectory:
// a junction swapped in above cannot redirect a later open) with FILE_OPEN_REPARSE_POINT (the
// link itself is opened, never its target) and refused if it is a reparse point. Wine shows a
// Unix symlink as no reparse point at all and opens its target; its handle's final path is the
// target's, so each component's final path must also be its parent's followed by its name.
//
// UniqueFd stays an int: a CRT descriptor over the HANDLE (_open_osfhandle), which
// _get_osfhandle gives back for the next relative open. That keeps the header and its callers'
// ::write/::close as they are on POSIX; a handle-typed UniqueFd would change every caller.
// The flags are POSIX's as mingw's <fcntl.h> has them: O_RDONLY/O_WRONLY/O_RDWR, O_CREAT,
// O_EXCL, O_TRUNC, O_APPEND; anything else (O_DIRECTORY, O_NOFOLLOW...) is not defined there.
#include <windows.h>
// windows.h first: winternl.h and aclapi.h need its types.
#include <aclapi.h>
#include <fcntl.h>
#include <io.h>
#include <sddl.h>
#include <winternl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "base/directories.h"
#include "base/safe_open.h"
#include "base/windows_text.h"

namespace stackie {

void force_walk_for_testing(bool) {}  // there is only the walk here

namespace {

// An owned NT handle (NtCreateFile gives null on failure, CreateFileW INVALID_HANDLE_VALUE).
class Handle {
 public:
  Handle() = default;
  explicit Handle(HANDLE handle) : handle_(handle) {}
  Handle(Handle&& other) noexcept : handle_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      close();
      handle_ = other.release();
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }
  HANDLE get() const { return handle_; }
  bool valid() const { return handle_ != nullptr && handle_ != INVALID_HANDLE_VALUE; }
  HANDLE release() {
    HANDLE out = handle_;
    handle_ = nullptr;
    return out;
  }

 private:
  void close() {
    if (valid()) CloseHandle(handle_);
    handle_ = nullptr;
  }
  HANDLE handle_ = nullptr;
};

// "a/b\c" -> {"a", "b", "c"}; empty components are skipped. Nullopt for an absolute path, a
// "." or ".." component, or one with ':' (a drive, or an alternate data stream): '\' separates
// too, since NtCreateFile would otherwise take "a\b" as two components we never checked.
std::optional<std::vector<std::string>> components(const std::string& relative) {
  std::vector<std::string> out;
  if (!relative.empty() && (relative[0] == '/' || relative[0] == '\\')) return std::nullopt;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find_first_of("/\\", start);
    if (end == std::string::npos) end = relative.size();
    std::string name = relative.substr(start, end - start);
    if (name == "." || name == ".." || name.find(':') != std::string::npos) return std::nullopt;
    if (!name.empty()) out.push_back(std::move(name));
    start = end + 1;
  }
  return out;
}

std::string shown_below(const std::string& dir_shown, const std::string& relative) {
  if (relative.empty()) return dir_shown;
  return (dir_shown.empty() || dir_shown.back() == '/' ? dir_shown : dir_shown + "/") + relative;
}

std::string shown_upto(const std::string& dir_shown, const std::vector<std::string>& parts,
                       size_t upto) {
  std::string relative;
  for (size_t i = 0; i <= upto && i < parts.size(); ++i) relative += (i ? "/" : "") + parts[i];
  return shown_below(dir_shown, relative);
}

Error link_refused(const std::string& shown) {
  return Error{-ELOOP, shown +
                           ": is a symbolic link or junction where a directory or file of the "
                           "block's storage belongs; refused (storage paths are never followed)"};
}

Error nt_error(NTSTATUS status, const std::string& what) {
  Error error = windows_error(what, RtlNtStatusToDosError(status));
  DWORD code = RtlNtStatusToDosError(status);
  if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) error.code = -ENOENT;
  if (code == ERROR_FILE_EXISTS || code == ERROR_ALREADY_EXISTS) error.code = -EEXIST;
  if (code == ERROR_DIRECTORY) error.code = -ENOTDIR;
  return error;
}

HANDLE handle_of(int fd) {
  return reinterpret_cast<HANDLE>(::_get_osfhandle(fd));
}

// Opens the single component `name` relative to the directory `parent`, as the reparse point
// it may be. Not inheritable (no OBJ_INHERIT): the CLOEXEC of this side.
NTSTATUS open_once(HANDLE parent, const std::wstring& name, ACCESS_MASK access, ULONG disposition,
                   ULONG options, Handle* out) {
  UNICODE_STRING unicode{};
  unicode.Buffer = const_cast<wchar_t*>(name.c_str());
  unicode.Length = unicode.MaximumLength = static_cast<USHORT>(name.size() * sizeof(wchar_t));
  OBJECT_ATTRIBUTES attributes;
  InitializeObjectAttributes(&attributes, &unicode, OBJ_CASE_INSENSITIVE, parent, nullptr);
  IO_STATUS_BLOCK io{};
  HANDLE handle = nullptr;
  NTSTATUS status = NtCreateFile(
      &handle, access | SYNCHRONIZE | FILE_READ_ATTRIBUTES, &attributes, &io, nullptr,
      FILE_ATTRIBUTE_NORMAL, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, disposition,
      options | FILE_OPEN_REPARSE_POINT | FILE_SYNCHRONOUS_IO_NONALERT, nullptr, 0);
  if (NT_SUCCESS(status)) *out = Handle(handle);
  return status;
}

// From ntstatus.h, which clashes with windows.h's own subset when both are included.
constexpr NTSTATUS kNameNotFound = static_cast<NTSTATUS>(0xC0000034);
constexpr NTSTATUS kNameCollision = static_cast<NTSTATUS>(0xC0000035);

// open_once, with FILE_OPEN_IF done as an open, else an exclusive create (and an open again if
// the name appeared meanwhile). Wine creates through a dangling Unix symlink on FILE_OPEN_IF
// (open(2) with O_CREAT follows it, out of the directory); an exclusive create never does.
NTSTATUS open_child(HANDLE parent, const std::wstring& name, ACCESS_MASK access, ULONG disposition,
                    ULONG options, Handle* out) {
  if (disposition != FILE_OPEN_IF)
    return open_once(parent, name, access, disposition, options, out);
  NTSTATUS status = open_once(parent, name, access, FILE_OPEN, options, out);
  if (status != kNameNotFound) return status;
  status = open_once(parent, name, access, FILE_CREATE, options, out);
  if (status != kNameCollision) return status;
  return open_once(parent, name, access, FILE_OPEN, options, out);
}

Result<std::wstring> final_path(HANDLE handle, const std::string& shown) {
  std::wstring out(MAX_PATH, L'\0');
  for (;;) {
    DWORD n = GetFinalPathNameByHandleW(handle, out.data(), static_cast<DWORD>(out.size()),
                                        FILE_NAME_NORMALIZED);
    if (n == 0) return windows_error(shown + ": cannot resolve its path");
    if (n < out.size()) {
      out.resize(n);
      return out;
    }
    out.resize(n + 1);
  }
}

std::wstring joined(const std::wstring& dir_final, const std::wstring& name) {
  if (!dir_final.empty() && dir_final.back() == L'\\') return dir_final + name;
  return dir_final + L'\\' + name;
}

bool same_path(const std::wstring& a, const std::wstring& b) {
  return CompareStringOrdinal(a.data(), static_cast<int>(a.size()), b.data(),
                              static_cast<int>(b.size()), TRUE) == CSTR_EQUAL;
}

enum class Link {
  none,
  reparse_point,   // a symlink or junction: opened as itself, removable as itself
  leads_elsewhere  // no reparse point, but the handle is another file's (Wine: a Unix symlink)
};

// What `child`, opened as `name` in the directory whose final path is `dir_final`, is.
// GetFileInformationByHandle rather than FileAttributeTagInfo: both carry the reparse bit, and
// Wine implements the former everywhere.
Result<Link> link_kind(HANDLE child, const std::wstring& dir_final, const std::wstring& name,
                       const std::string& shown, BY_HANDLE_FILE_INFORMATION* info) {
  if (!GetFileInformationByHandle(child, info)) return windows_error("stat " + shown);
  if (info->dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) return Link::reparse_point;
  STACKIE_TRY_ASSIGN(child_final, final_path(child, shown));
  return same_path(joined(dir_final, name), child_final) ? Link::none : Link::leads_elsewhere;
}

constexpr ACCESS_MASK kDirectoryAccess = FILE_LIST_DIRECTORY | FILE_TRAVERSE;

struct Opened {
  Handle handle;
  std::wstring final;  // its final path, for the next component's check
  BY_HANDLE_FILE_INFORMATION info{};
};

// The walk: one component at a time from `dir`, each refused if it is a link. Every component
// but the last is opened as a directory (created when `create`); the last with `access`,
// `disposition` and `options`.
Result<Opened> walk(HANDLE dir, const std::vector<std::string>& parts, ACCESS_MASK access,
                    ULONG disposition, ULONG options, bool create, const std::string& dir_shown) {
  Opened current;
  STACKIE_TRY_ASSIGN(dir_final, final_path(dir, dir_shown));
  current.final = std::move(dir_final);
  HANDLE parent = dir;
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    std::string here = shown_upto(dir_shown, parts, i);
    std::wstring name = widen(parts[i]);
    Opened next;
    NTSTATUS status =
        last ? open_child(parent, name, access, disposition, options, &next.handle)
             : open_child(parent, name, kDirectoryAccess, create ? FILE_OPEN_IF : FILE_OPEN,
                          FILE_DIRECTORY_FILE, &next.handle);
    if (!NT_SUCCESS(status)) return nt_error(status, here);
    STACKIE_TRY_ASSIGN(link, link_kind(next.handle.get(), current.final, name, here, &next.info));
    if (link != Link::none) return link_refused(here);
    next.final = joined(current.final, name);
    current = std::move(next);
    parent = current.handle.get();
  }
  return current;
}

Result<UniqueFd> to_fd(Handle handle, int crt_flags, const std::string& shown) {
  int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(handle.get()), crt_flags | _O_NOINHERIT);
  if (fd < 0) return system_error(errno, "open " + shown);
  handle.release();
  return UniqueFd(fd);
}

ACCESS_MASK access_for(int flags) {
  switch (flags & (O_WRONLY | O_RDWR)) {
    case O_WRONLY: return FILE_GENERIC_WRITE;
    case O_RDWR: return FILE_GENERIC_READ | FILE_GENERIC_WRITE;
    default: return FILE_GENERIC_READ;
  }
}

// Never an overwriting disposition: a reparse point opened for FILE_OVERWRITE would be
// truncated before we could look at it. O_TRUNC is applied after the checks.
ULONG disposition_for(int flags) {
  if ((flags & O_CREAT) && (flags & O_EXCL)) return FILE_CREATE;
  return (flags & O_CREAT) ? FILE_OPEN_IF : FILE_OPEN;
}

Status truncate_if_asked(HANDLE handle, int flags, const std::string& shown) {
  if (!(flags & O_TRUNC)) return {};
  FILE_END_OF_FILE_INFO end{};
  if (!SetFileInformationByHandle(handle, FileEndOfFileInfo, &end, sizeof end))
    return windows_error("truncate " + shown);
  return {};
}

// TokenUser or TokenOwner of our own token, as GetTokenInformation fills it in; empty when it
// cannot be read.
std::vector<unsigned char> own_token_information(TOKEN_INFORMATION_CLASS which) {
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return {};
  DWORD size = 0;
  GetTokenInformation(token, which, nullptr, 0, &size);
  std::vector<unsigned char> buffer(size);
  if (size == 0 || !GetTokenInformation(token, which, buffer.data(), size, &size)) buffer.clear();
  CloseHandle(token);
  return buffer;
}

PSID user_sid_of(std::vector<unsigned char>& token_user) {
  return reinterpret_cast<TOKEN_USER*>(token_user.data())->User.Sid;
}

// The SIDs a storage root may be owned by: the user's, and the token's default owner for new
// objects (BUILTIN\Administrators for an elevated administrator), which is what a directory we
// created ourselves gets.
bool owned_by_us(PSID owner) {
  std::vector<unsigned char> user = own_token_information(TokenUser);
  if (!user.empty() && EqualSid(user_sid_of(user), owner)) return true;
  std::vector<unsigned char> default_owner = own_token_information(TokenOwner);
  return !default_owner.empty() &&
         EqualSid(reinterpret_cast<TOKEN_OWNER*>(default_owner.data())->Owner, owner);
}

}  // namespace

// The root's own path is the user's (trusted as given); what is checked is what a planted or
// foreign root would break: it is a directory, not a reparse point, and owned by us (the
// owner SID). Its DACL is not checked: as in make_directories, a directory in the user's
// profile inherits one that admits only the user, SYSTEM and Administrators, and `privacy`
// has no cheap exact equivalent here.
Result<UniqueFd> open_storage_root(const std::string& path, Privacy) {
  bool absolute = (path.size() >= 3 && path[1] == ':' && (path[2] == '/' || path[2] == '\\')) ||
                  (path.size() >= 2 && (path[0] == '/' || path[0] == '\\') && path[1] == path[0]);
  if (!absolute) return Error{-EINVAL, "storage root must be an absolute path, got '" + path + "'"};
  STACKIE_TRY(make_directories(path));
  Handle handle(CreateFileW(
      widen(path).c_str(),
      FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE,
      FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
      FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr));
  if (!handle.valid()) return windows_error("open storage root " + path);
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(handle.get(), &info)) return windows_error("stat " + path);
  if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
    return Error{-ELOOP, "storage " + path +
                             " is a symbolic link or junction; refused: name the directory "
                             "it points to"};
  if (!(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
    return Error{-ENOTDIR, "storage " + path + ": not a directory"};
  PSID owner = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD code = GetSecurityInfo(handle.get(), SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, &owner,
                               nullptr, nullptr, nullptr, &descriptor);
  if (code != ERROR_SUCCESS) return windows_error("read the owner of storage " + path, code);
  bool ours = owner != nullptr && owned_by_us(owner);
  LocalFree(descriptor);
  if (!ours)
    return Error{-EPERM, "storage " + path +
                             " is not owned by you; refused: another user could read and plant "
                             "files in it"};
  return to_fd(std::move(handle), _O_RDONLY, path);
}

Result<UniqueFd> open_beneath(int dir, const std::string& relative, int flags,
                              const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, relative);
  auto parts = components(relative);
  if (!parts) return Error{-EINVAL, shown + ": not a plain path below its storage root"};
  if (parts->empty()) {
    HANDLE copy = nullptr;
    if (!DuplicateHandle(GetCurrentProcess(), handle_of(dir), GetCurrentProcess(), &copy, 0, FALSE,
                         DUPLICATE_SAME_ACCESS))
      return windows_error("open " + shown);
    return to_fd(Handle(copy), _O_RDONLY, shown);
  }
  STACKIE_TRY_ASSIGN(opened, walk(handle_of(dir), *parts, access_for(flags), disposition_for(flags),
                                  0, false, dir_shown));
  STACKIE_TRY(truncate_if_asked(opened.handle.get(), flags, shown));
  return to_fd(std::move(opened.handle), flags & O_APPEND, shown);
}

Result<UniqueFd> make_directories_beneath(int dir, const std::string& relative,
                                          const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, relative);
  auto parts = components(relative);
  if (!parts) return Error{-EINVAL, shown + ": not a plain path below its storage root"};
  if (parts->empty()) return open_beneath(dir, "", O_RDONLY, dir_shown);
  STACKIE_TRY_ASSIGN(opened, walk(handle_of(dir), *parts, kDirectoryAccess, FILE_OPEN_IF,
                                  FILE_DIRECTORY_FILE, true, dir_shown));
  return to_fd(std::move(opened.handle), _O_RDONLY, shown);
}

namespace {

constexpr ACCESS_MASK kRemoveAccess = DELETE | FILE_WRITE_ATTRIBUTES;

// Marks `handle` deleted: the entry goes when its last handle closes. A read-only file
// refuses; its attribute is cleared first, as rm -rf would.
Status delete_on_close(HANDLE handle, const std::string& shown) {
  FILE_DISPOSITION_INFO disposition{TRUE};
  if (SetFileInformationByHandle(handle, FileDispositionInfo, &disposition, sizeof disposition))
    return {};
  if (GetLastError() == ERROR_ACCESS_DENIED) {
    FILE_BASIC_INFO basic{};
    basic.FileAttributes = FILE_ATTRIBUTE_NORMAL;
    if (SetFileInformationByHandle(handle, FileBasicInfo, &basic, sizeof basic) &&
        SetFileInformationByHandle(handle, FileDispositionInfo, &disposition, sizeof disposition))
      return {};
  }
  return windows_error("remove " + shown);
}

// The names in the directory `handle`, without "." and "..".
Result<std::vector<std::wstring>> list_directory(HANDLE handle, const std::string& shown) {
  std::vector<std::wstring> names;
  alignas(8) unsigned char buffer[16384];
  FILE_INFO_BY_HANDLE_CLASS which = FileIdBothDirectoryRestartInfo;
  for (;;) {
    if (!GetFileInformationByHandleEx(handle, which, buffer, sizeof buffer)) {
      if (GetLastError() == ERROR_NO_MORE_FILES) return names;
      return windows_error("list " + shown);
    }
    which = FileIdBothDirectoryInfo;
    for (size_t offset = 0;;) {
      auto* entry = reinterpret_cast<FILE_ID_BOTH_DIR_INFO*>(buffer + offset);
      std::wstring name(entry->FileName, entry->FileNameLength / sizeof(wchar_t));
      if (name != L"." && name != L"..") names.push_back(std::move(name));
      if (entry->NextEntryOffset == 0) break;
      offset += entry->NextEntryOffset;
    }
  }
}

// Removes `name` in the directory `parent` (final path `parent_final`) and all below it. A
// reparse point is removed as itself: it was opened as one, so the disposition applies to it.
// What leads elsewhere without being one is refused: that handle is its target's (Wine opens a
// Unix symlink's target, and deleting through it would delete the target; no Windows call
// removes such a link itself).
Status remove_entry(HANDLE parent, const std::wstring& parent_final, const std::wstring& name,
                    const std::string& shown) {
  Handle child;
  NTSTATUS status =
      open_child(parent, name, kRemoveAccess | FILE_LIST_DIRECTORY, FILE_OPEN, 0, &child);
  if (!NT_SUCCESS(status)) {
    Error error = nt_error(status, "open " + shown);
    return error.code == -ENOENT ? Status{} : Status{error};
  }
  BY_HANDLE_FILE_INFORMATION info{};
  STACKIE_TRY_ASSIGN(link, link_kind(child.get(), parent_final, name, shown, &info));
  if (link == Link::leads_elsewhere)
    return Error{-ELOOP, shown +
                             ": is a link this system cannot remove without removing what it "
                             "points to; refused: remove it by hand"};
  if (link == Link::none && (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
    STACKIE_TRY_ASSIGN(names, list_directory(child.get(), shown));
    std::wstring child_final = joined(parent_final, name);
    for (const std::wstring& entry : names)
      STACKIE_TRY(remove_entry(child.get(), child_final, entry, shown + "/" + narrow(entry)));
  }
  return delete_on_close(child.get(), shown);
}

}  // namespace

Status remove_tree_beneath(int dir, const std::string& relative, const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, relative);
  auto parts = components(relative);
  if (!parts || parts->empty())
    return Error{-EINVAL, shown + ": not a plain path below its storage root"};
  std::vector<std::string> parent_parts(parts->begin(), parts->end() - 1);
  Opened parent;
  if (parent_parts.empty()) {
    STACKIE_TRY_ASSIGN(dir_final, final_path(handle_of(dir), dir_shown));
    parent.final = std::move(dir_final);
  } else {
    auto opened = walk(handle_of(dir), parent_parts, kDirectoryAccess, FILE_OPEN,
                       FILE_DIRECTORY_FILE, false, dir_shown);
    if (!opened.ok()) return opened.error().code == -ENOENT ? Status{} : Status{opened.error()};
    parent = std::move(*opened);
  }
  HANDLE parent_handle = parent.handle.valid() ? parent.handle.get() : handle_of(dir);
  return remove_entry(parent_handle, parent.final, widen(parts->back()), shown);
}

Result<UniqueFd> open_file_in(int dir, const std::string& name, int flags,
                              const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, name);
  auto parts = components(name);
  if (!parts || parts->size() != 1 || (*parts)[0] != name)
    return Error{-EINVAL, shown + ": not a plain file name"};
  STACKIE_TRY_ASSIGN(opened, walk(handle_of(dir), *parts, access_for(flags), disposition_for(flags),
                                  FILE_NON_DIRECTORY_FILE, false, dir_shown));
  if ((opened.info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ||
      GetFileType(opened.handle.get()) != FILE_TYPE_DISK)
    return Error{-EINVAL, shown + ": not a regular file; refused"};
  STACKIE_TRY(truncate_if_asked(opened.handle.get(), flags, shown));
  return to_fd(std::move(opened.handle), flags & O_APPEND, shown);
}

namespace {

// Rights that let a principal read a file or decide who may.
constexpr ACCESS_MASK kRevealingAccess =
    FILE_READ_DATA | GENERIC_READ | GENERIC_ALL | MAXIMUM_ALLOWED | WRITE_DAC | WRITE_OWNER;

// The SID of the first allowed ACE of `dacl` that gives someone other than us, SYSTEM or
// Administrators a revealing right, as text; empty when there is none.
std::string first_stranger(PACL dacl) {
  for (DWORD i = 0; i < dacl->AceCount; ++i) {
    void* ace = nullptr;
    if (!GetAce(dacl, i, &ace)) continue;
    const auto* header = static_cast<const ACE_HEADER*>(ace);
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE || (header->AceFlags & INHERIT_ONLY_ACE))
      continue;
    auto* allowed = static_cast<ACCESS_ALLOWED_ACE*>(ace);
    PSID sid = &allowed->SidStart;
    if (!(allowed->Mask & kRevealingAccess) || owned_by_us(sid) ||
        IsWellKnownSid(sid, WinLocalSystemSid) || IsWellKnownSid(sid, WinBuiltinAdministratorsSid))
      continue;
    wchar_t* text = nullptr;
    std::string shown = "a SID";
    if (ConvertSidToStringSidW(sid, &text)) {
      shown = narrow(text);
      LocalFree(text);
    }
    char mask[16];
    std::snprintf(mask, sizeof mask, "0x%lx", static_cast<unsigned long>(allowed->Mask));
    return shown + ", access " + mask;
  }
  return {};
}

}  // namespace

Status check_private_file(int fd, const std::string& shown) {
  PSID owner = nullptr;
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD code = GetSecurityInfo(handle_of(fd), SE_FILE_OBJECT,
                               OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &owner,
                               nullptr, &dacl, nullptr, &descriptor);
  if (code != ERROR_SUCCESS) return windows_error("read the owner and DACL of " + shown, code);
  const bool ours = owner != nullptr && owned_by_us(owner);
  const std::string stranger = dacl == nullptr ? "Everyone (no DACL)" : first_stranger(dacl);
  LocalFree(descriptor);
  if (!ours) return Error{-EPERM, shown + ": must be a file of yours (it is another user's)"};
  if (!stranger.empty())
    return Error{-EPERM, shown + ": others may read it (its DACL admits " + stranger + ")"};
  return {};
}

Status make_private_file(int fd, const std::string& shown) {
  std::vector<unsigned char> user = own_token_information(TokenUser);
  if (user.empty()) return windows_error("read our own user SID (GetTokenInformation)");
  unsigned char system_sid[SECURITY_MAX_SID_SIZE];
  DWORD system_size = sizeof system_sid;
  if (!CreateWellKnownSid(WinLocalSystemSid, nullptr, system_sid, &system_size))
    return windows_error("CreateWellKnownSid(SYSTEM)");
  EXPLICIT_ACCESS_W entries[2] = {};
  PSID sids[2] = {user_sid_of(user), system_sid};
  for (int i = 0; i < 2; ++i) {
    entries[i].grfAccessPermissions = GENERIC_ALL;
    entries[i].grfAccessMode = SET_ACCESS;
    entries[i].grfInheritance = NO_INHERITANCE;
    entries[i].Trustee.TrusteeForm = TRUSTEE_IS_SID;
    entries[i].Trustee.ptstrName = static_cast<LPWSTR>(sids[i]);
  }
  PACL acl = nullptr;
  if (DWORD rc = SetEntriesInAclW(2, entries, nullptr, &acl); rc != ERROR_SUCCESS)
    return windows_error("SetEntriesInAcl", rc);
  // The same file again, with the right to change its DACL (as its owner we may); by handle,
  // so that no name is looked up again.
  HANDLE dac = ReOpenFile(handle_of(fd), WRITE_DAC | READ_CONTROL,
                          FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, 0);
  if (dac == INVALID_HANDLE_VALUE) {
    Error error = windows_error("reopen " + shown + " to make it private");
    LocalFree(acl);
    return error;
  }
  DWORD rc = SetSecurityInfo(dac, SE_FILE_OBJECT,
                             DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                             nullptr, nullptr, acl, nullptr);
  CloseHandle(dac);
  LocalFree(acl);
  if (rc != ERROR_SUCCESS) return windows_error("make " + shown + " private (SetSecurityInfo)", rc);
  return {};
}

Result<UniqueFd> open_directory(const std::string& path) {
  Handle handle(CreateFileW(
      widen(path).c_str(), FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
      FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
      FILE_FLAG_BACKUP_SEMANTICS, nullptr));
  if (!handle.valid()) {
    Error error = windows_error("open " + path);
    if (GetLastError() == ERROR_FILE_NOT_FOUND || GetLastError() == ERROR_PATH_NOT_FOUND)
      error.code = -ENOENT;
    return error;
  }
  return to_fd(std::move(handle), _O_RDONLY, path);
}

namespace {

// `name` directly in `dir`, opened as itself with `access` for a change to its entry (a rename,
// a removal). A link whose handle is its target's is refused: the change would be the target's.
Result<Handle> open_entry(int dir, const std::string& name, ACCESS_MASK access,
                          const std::string& shown) {
  auto parts = components(name);
  if (!parts || parts->size() != 1 || (*parts)[0] != name)
    return Error{-EINVAL, shown + ": not a plain file name"};
  STACKIE_TRY_ASSIGN(dir_final, final_path(handle_of(dir), shown));
  Handle entry;
  std::wstring wide = widen(name);
  NTSTATUS status = open_child(handle_of(dir), wide, access, FILE_OPEN, 0, &entry);
  if (!NT_SUCCESS(status)) return nt_error(status, shown);
  BY_HANDLE_FILE_INFORMATION info{};
  STACKIE_TRY_ASSIGN(link, link_kind(entry.get(), dir_final, wide, shown, &info));
  if (link == Link::leads_elsewhere)
    return Error{-ELOOP, shown +
                             ": is a link this system cannot rename or remove without acting "
                             "on what it points to; refused: remove it by hand"};
  return entry;
}

}  // namespace

Status rename_in(int dir, const std::string& from, const std::string& to,
                 const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, from);
  auto target = components(to);
  if (!target || target->size() != 1 || (*target)[0] != to)
    return Error{-EINVAL, shown_below(dir_shown, to) + ": not a plain file name"};
  STACKIE_TRY_ASSIGN(entry, open_entry(dir, from, DELETE, shown));
  // The new name relative to the directory's handle: it cannot land anywhere else. NT's own
  // call: FILE_RENAME_INFORMATION is FILE_RENAME_INFO's layout, and Wine's
  // SetFileInformationByHandle makes the name a full path from the current directory.
  std::wstring name = widen(to);
  std::vector<unsigned char> buffer(sizeof(FILE_RENAME_INFO) + name.size() * sizeof(wchar_t));
  auto* rename = reinterpret_cast<FILE_RENAME_INFO*>(buffer.data());
  rename->ReplaceIfExists = TRUE;
  rename->RootDirectory = handle_of(dir);
  rename->FileNameLength = static_cast<DWORD>(name.size() * sizeof(wchar_t));
  std::copy(name.begin(), name.end(), rename->FileName);
  IO_STATUS_BLOCK io{};
  NTSTATUS status = NtSetInformationFile(entry.get(), &io, rename,
                                         static_cast<ULONG>(buffer.size()), FileRenameInformation);
  if (!NT_SUCCESS(status)) return nt_error(status, "rename " + shown);
  return {};
}

Status remove_file_in(int dir, const std::string& name, const std::string& dir_shown) {
  std::string shown = shown_below(dir_shown, name);
  auto entry = open_entry(dir, name, kRemoveAccess, shown);
  if (!entry.ok()) return entry.error().code == -ENOENT ? Status{} : Status{entry.error()};
  return delete_on_close(entry->get(), shown);
}

bool still_named_in(int fd, int dir, const std::string& name) {
  BY_HANDLE_FILE_INFORMATION held{}, named{};
  if (!GetFileInformationByHandle(handle_of(fd), &held)) return false;
  FILE_STANDARD_INFO standard{};
  if (GetFileInformationByHandleEx(handle_of(fd), FileStandardInfo, &standard, sizeof standard) &&
      standard.DeletePending)
    return false;
  Handle entry;
  if (!NT_SUCCESS(open_child(handle_of(dir), widen(name), 0, FILE_OPEN, 0, &entry)) ||
      !GetFileInformationByHandle(entry.get(), &named))
    return false;
  // The file index alone: both are on `dir`'s volume (the entry is opened as itself, never
  // through a mount point), and Wine reports a volume serial of 0 for a handle renamed since.
  return held.nFileIndexHigh == named.nFileIndexHigh && held.nFileIndexLow == named.nFileIndexLow;
}

bool directory_still_there(int dir) {
  FILE_STANDARD_INFO standard{};
  if (!GetFileInformationByHandleEx(handle_of(dir), FileStandardInfo, &standard, sizeof standard))
    return false;
  return !standard.DeletePending;
}

uint64_t file_size(int fd) {
  LARGE_INTEGER size{};
  return GetFileSizeEx(handle_of(fd), &size) ? static_cast<uint64_t>(size.QuadPart) : 0;
}

Status truncate_open_file(int fd, const std::string& shown) {
  FILE_END_OF_FILE_INFO end{};
  if (!SetFileInformationByHandle(handle_of(fd), FileEndOfFileInfo, &end, sizeof end))
    return windows_error("truncate " + shown);
  return {};
}

Status write_and_sync(int fd, std::string_view text, const std::string& shown) {
  while (!text.empty()) {
    int n =
        ::_write(fd, text.data(), static_cast<unsigned>(std::min<size_t>(text.size(), 1 << 30)));
    if (n < 0) return system_error(errno, "write " + shown);
    text.remove_prefix(static_cast<size_t>(n));
  }
  if (!FlushFileBuffers(handle_of(fd))) return windows_error("sync " + shown);
  return {};
}

}  // namespace stackie
