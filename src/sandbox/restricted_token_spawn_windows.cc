// Windows only: carries out a RestrictedTokenPlan (see restricted_token_plan.h for the why of
// every SID and ACE). Each Win32 object has one owner below; nothing leaks on an error path.
// rand_s (RtlGenRandom), declared by <stdlib.h> only when asked for.
#define _CRT_RAND_S
#include <stdlib.h>

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// after windows.h
#include <aclapi.h>
#include <sddl.h>

#include <algorithm>
#include <cstdio>
#include <cwctype>
#include <memory>
#include <type_traits>
#include <utility>

#include "base/windows_text.h"
#include "sandbox/restricted_token_spawn.h"

namespace stackie {

namespace {

Error win32_error(std::string_view what, DWORD code = GetLastError()) {
  char* text = nullptr;
  FormatMessageA(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string message =
      std::string(what) + ": " + (text ? text : "error") + " (" + std::to_string(code) + ")";
  if (text) LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  return Error{-static_cast<int>(code), message};
}

struct Handle {
  HANDLE h = nullptr;
  Handle() = default;
  explicit Handle(HANDLE value) : h(value) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (h && h != INVALID_HANDLE_VALUE) CloseHandle(h);
    h = nullptr;
  }
  HANDLE release() { return std::exchange(h, nullptr); }
};

// SIDs from ConvertStringSidToSidW (LocalAlloc) or copied out of a token (owned buffer).
class SidTable {
 public:
  ~SidTable() {
    for (PSID sid : converted_) LocalFree(sid);
  }
  Result<PSID> literal(const std::string& text) {
    PSID sid = nullptr;
    if (!ConvertStringSidToSidW(widen(text).c_str(), &sid))
      return win32_error("ConvertStringSidToSid " + text);
    converted_.push_back(sid);
    return sid;
  }
  PSID copy(PSID sid) {
    copies_.emplace_back(GetLengthSid(sid));
    CopySid(static_cast<DWORD>(copies_.back().size()), copies_.back().data(), sid);
    return copies_.back().data();
  }

 private:
  std::vector<PSID> converted_;
  std::vector<std::vector<BYTE>> copies_;
};

Result<std::vector<BYTE>> token_information(HANDLE token, TOKEN_INFORMATION_CLASS what) {
  DWORD size = 0;
  GetTokenInformation(token, what, nullptr, 0, &size);
  if (size == 0) return win32_error("GetTokenInformation (size)");
  std::vector<BYTE> buffer(size);
  if (!GetTokenInformation(token, what, buffer.data(), size, &size))
    return win32_error("GetTokenInformation");
  return buffer;
}

// The daemon's own user and logon SIDs: what Principal::user() and ::logon_session() mean.
struct Caller {
  SidTable sids;
  PSID user = nullptr;
  PSID logon = nullptr;
};

Status read_caller(HANDLE token, Caller& caller) {
  STACKIE_TRY_ASSIGN(user, token_information(token, TokenUser));
  caller.user = caller.sids.copy(reinterpret_cast<TOKEN_USER*>(user.data())->User.Sid);
  STACKIE_TRY_ASSIGN(groups_buffer, token_information(token, TokenGroups));
  const auto* groups = reinterpret_cast<TOKEN_GROUPS*>(groups_buffer.data());
  for (DWORD i = 0; i < groups->GroupCount; ++i)
    if ((groups->Groups[i].Attributes & SE_GROUP_LOGON_ID) == SE_GROUP_LOGON_ID)
      caller.logon = caller.sids.copy(groups->Groups[i].Sid);
  if (!caller.logon)
    return Error{0, "the daemon's token has no logon SID; restricted blocks need one"};
  return {};
}

Result<PSID> resolve(Caller& caller, const Principal& who) {
  switch (who.kind) {
    case Principal::Kind::user: return caller.user;
    case Principal::Kind::logon_session: return caller.logon;
    case Principal::Kind::literal: return caller.sids.literal(who.sid);
  }
  return Error{0, "unknown principal"};
}

// SetEntriesInAclW input for `entries`; `old_acl` null builds a fresh ACL.
Result<PACL> build_acl(Caller& caller, const std::vector<AclEntry>& entries, PACL old_acl) {
  std::vector<EXPLICIT_ACCESS_W> explicit_entries;
  for (const AclEntry& entry : entries) {
    STACKIE_TRY_ASSIGN(sid, resolve(caller, entry.who));
    EXPLICIT_ACCESS_W ea{};
    ea.grfAccessPermissions = entry.mask;
    ea.grfAccessMode = entry.type == AclEntry::Type::allow ? GRANT_ACCESS : DENY_ACCESS;
    ea.grfInheritance = entry.inheritance;
    ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
    ea.Trustee.TrusteeType = TRUSTEE_IS_UNKNOWN;
    ea.Trustee.ptstrName = static_cast<LPWSTR>(sid);
    explicit_entries.push_back(ea);
  }
  PACL acl = nullptr;
  DWORD rc = SetEntriesInAclW(static_cast<ULONG>(explicit_entries.size()), explicit_entries.data(),
                              old_acl, &acl);
  if (rc != ERROR_SUCCESS) return win32_error("SetEntriesInAcl", rc);
  return acl;  // LocalFree
}

Result<HANDLE> own_token() {
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(),
                        TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY | TOKEN_ADJUST_DEFAULT,
                        &token))
    return win32_error("OpenProcessToken");
  return token;
}

// The path's final form as GetFinalPathNameByHandleW gives it ("\\?\C:\dir\x"): absolute, long
// names, backslashes, no trailing one (but a drive's root keeps its own).
std::wstring expected_final_path(const std::wstring& path) {
  DWORD size = GetFullPathNameW(path.c_str(), 0, nullptr, nullptr);
  std::wstring full(size, L'\0');
  DWORD n = size ? GetFullPathNameW(path.c_str(), size, full.data(), nullptr) : 0;
  full.resize(n < size ? n : 0);
  if (full.empty()) return path;
  DWORD long_size = GetLongPathNameW(full.c_str(), nullptr, 0);
  if (long_size != 0) {
    std::wstring long_name(long_size, L'\0');
    DWORD m = GetLongPathNameW(full.c_str(), long_name.data(), long_size);
    if (m != 0 && m < long_size) full = long_name.substr(0, m);
  }
  // A drive's root keeps its backslash ("C:\\", "\\\\?\\C:\\"): only what follows a name goes.
  while (full.size() > 3 && (full.back() == L'\\' || full.back() == L'/') &&
         full[full.size() - 2] != L':')
    full.pop_back();
  if (full.rfind(L"\\\\?\\", 0) == 0) return full;
  if (full.rfind(L"\\\\", 0) == 0) return L"\\\\?\\UNC\\" + full.substr(2);
  return L"\\\\?\\" + full;
}

Result<std::wstring> final_path_of(HANDLE handle, const std::string& shown) {
  std::wstring out(MAX_PATH, L'\0');
  for (;;) {
    DWORD n = GetFinalPathNameByHandleW(handle, out.data(), static_cast<DWORD>(out.size()),
                                        FILE_NAME_NORMALIZED);
    if (n == 0) return win32_error(shown + ": cannot resolve its path");
    if (n < out.size()) {
      out.resize(n);
      return out;
    }
    out.resize(n + 1);
  }
}

// A reparse point that stands for another name (a junction, a symbolic link): what a block
// could plant. Others (OneDrive's placeholders, deduplicated or compressed files) are the file
// itself, and are granted like any file; the final-path check still catches any redirection.
// Where the tag cannot be read (Wine implements no FileAttributeTagInfo), refused.
bool names_another_file(HANDLE handle) {
  FILE_ATTRIBUTE_TAG_INFO tag{};
  if (!GetFileInformationByHandleEx(handle, FileAttributeTagInfo, &tag, sizeof tag)) return true;
  return IsReparseTagNameSurrogate(tag.ReparseTag);
}

// A granted path opened as itself, to read and write its DACL through the handle. The grants
// land on the user's folders too, and a first-party block may write its project directory: it
// could delete a read-only path in it (or a directory on the way) and put a junction there, so
// that a grant made by name would land on the junction's target, a folder of the user's. So the
// last component is opened as the reparse point it may be and refused if it is one, and the
// handle's final path must be the path asked for: any link on the way (or Wine's Unix symlink,
// which is no reparse point) makes them differ. Nothing is looked up by name after the check.
// With `missing` given, a path that does not exist gives a null handle and sets *missing.
Result<HANDLE> open_granted_path(const std::string& shown, ACCESS_MASK access, bool* missing) {
  const std::wstring path = widen(shown);
  HANDLE handle = CreateFileW(
      path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
      OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (handle == INVALID_HANDLE_VALUE) {
    DWORD code = GetLastError();
    if (missing && (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND)) {
      *missing = true;
      return static_cast<HANDLE>(nullptr);
    }
    return win32_error("open " + shown + " (to set its access list)", code);
  }
  Handle owned(handle);
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(handle, &info)) return win32_error("stat " + shown);
  if ((info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) && names_another_file(handle))
    return Error{0, shown + ": is a junction or symbolic link; refusing to change its access " +
                        "list (a block may have planted it to redirect the grant)"};
  // A DACL belongs to the file, not to the name: a hard link the block put in place of a
  // read-only file would carry the grant to the file it links, a file of the user's.
  if (!(info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) && info.nNumberOfLinks > 1)
    return Error{0, shown + ": has " + std::to_string(info.nNumberOfLinks) +
                        " names (hard links); refusing to change its access list (a block may "
                        "have linked a file of the user's here)"};
  STACKIE_TRY_ASSIGN(final_path, final_path_of(handle, shown));
  const std::wstring expected = expected_final_path(path);
  if (CompareStringOrdinal(final_path.data(), static_cast<int>(final_path.size()), expected.data(),
                           static_cast<int>(expected.size()), TRUE) != CSTR_EQUAL) {
    return Error{0, shown + ": leads to " + narrow(final_path) +
                        " (a junction or link on the way); refusing to change its access list " +
                        "(name the real path, or remove the link)"};
  }
  return owned.release();
}

Status apply_one(Caller& caller, const PathAcl& path_acl) {
  const DWORD access = READ_CONTROL | WRITE_DAC;
  STACKIE_TRY_ASSIGN(handle, open_granted_path(path_acl.path, access, nullptr));
  Handle owned(handle);
  PACL old_acl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  if (!path_acl.is_protected) {
    DWORD rc = GetSecurityInfo(owned.h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                               &old_acl, nullptr, &descriptor);
    if (rc != ERROR_SUCCESS) return win32_error("GetSecurityInfo " + path_acl.path, rc);
  }
  Result<PACL> acl = build_acl(caller, path_acl.entries, old_acl);
  if (descriptor) LocalFree(descriptor);
  if (!acl.ok()) return acl.take_error();
  SECURITY_INFORMATION what = DACL_SECURITY_INFORMATION;
  if (path_acl.is_protected) what |= PROTECTED_DACL_SECURITY_INFORMATION;
  // SetSecurityInfo propagates inheritable ACEs to what the directory holds, as the named call
  // does.
  DWORD rc = SetSecurityInfo(owned.h, SE_FILE_OBJECT, what, nullptr, nullptr, *acl, nullptr);
  LocalFree(*acl);
  if (rc != ERROR_SUCCESS) return win32_error("SetSecurityInfo " + path_acl.path, rc);
  return {};
}

// CreateProcess wants "NAME=value\0...\0\0"; Windows keeps it sorted by name, ignoring case.
// SystemRoot is added from the daemon's environment when the plan lacks it: Winsock and much of
// the C runtime fail without it.
std::wstring environment_block(const RestrictedTokenPlan& plan) {
  std::vector<std::pair<std::wstring, std::wstring>> entries;
  bool has_system_root = false;
  for (const auto& [name, value] : plan.environment) {
    entries.emplace_back(widen(name), widen(value));
    has_system_root |= _wcsicmp(entries.back().first.c_str(), L"SystemRoot") == 0;
  }
  wchar_t root[MAX_PATH];
  DWORD length = GetEnvironmentVariableW(L"SystemRoot", root, MAX_PATH);
  if (!has_system_root && length > 0 && length < MAX_PATH)
    entries.emplace_back(L"SystemRoot", std::wstring(root, length));
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return _wcsicmp(a.first.c_str(), b.first.c_str()) < 0;
  });
  std::wstring block;
  for (const auto& [name, value] : entries) {
    block += name + L"=" + value;
    block += L'\0';
  }
  block += L'\0';
  return block;
}

Result<HANDLE> create_restricted_token(HANDLE own, Caller& caller,
                                       const RestrictedTokenPlan& plan) {
  // DISABLE_MAX_PRIVILEGE deletes every privilege but SeChangeNotifyPrivilege: exactly the plan.
  if (plan.privileges_kept != std::vector<std::string>{"SeChangeNotifyPrivilege"})
    return Error{0, "restricted token: this backend keeps only SeChangeNotifyPrivilege"};
  std::vector<SID_AND_ATTRIBUTES> deny_only, restricting;
  for (const Principal& who : plan.deny_only) {
    STACKIE_TRY_ASSIGN(sid, resolve(caller, who));
    deny_only.push_back({sid, 0});
  }
  for (const Principal& who : plan.restricting_sids) {
    STACKIE_TRY_ASSIGN(sid, resolve(caller, who));
    restricting.push_back({sid, 0});
  }
  HANDLE token = nullptr;
  if (!CreateRestrictedToken(own, DISABLE_MAX_PRIVILEGE, static_cast<DWORD>(deny_only.size()),
                             deny_only.data(), 0, nullptr, static_cast<DWORD>(restricting.size()),
                             restricting.data(), &token))
    return win32_error("CreateRestrictedToken");
  Handle owned(token);

  STACKIE_TRY_ASSIGN(dacl, build_acl(caller, plan.default_dacl, nullptr));
  TOKEN_DEFAULT_DACL default_dacl{dacl};
  BOOL ok = SetTokenInformation(token, TokenDefaultDacl, &default_dacl, sizeof default_dacl);
  DWORD code = GetLastError();
  LocalFree(dacl);
  if (!ok) return win32_error("SetTokenInformation(TokenDefaultDacl)", code);
  return owned.release();
}

constexpr DWORD kJobUiRestrictions =
    JOB_OBJECT_UILIMIT_HANDLES | JOB_OBJECT_UILIMIT_READCLIPBOARD |
    JOB_OBJECT_UILIMIT_WRITECLIPBOARD | JOB_OBJECT_UILIMIT_GLOBALATOMS |
    JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS |
    JOB_OBJECT_UILIMIT_EXITWINDOWS | JOB_OBJECT_UILIMIT_DESKTOP;

Result<HANDLE> create_kill_on_close_job(const JobLimits& wanted) {
  Handle job(CreateJobObjectW(nullptr, nullptr));
  if (!job.h) return win32_error("CreateJobObject");
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  // No JOB_OBJECT_LIMIT_BREAKAWAY_OK: nothing the block starts can leave the job.
  limits.BasicLimitInformation.LimitFlags =
      JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  // The block's `limits:` (issue 18): all its processes together, as a cgroup counts them.
  if (wanted.memory_bytes != 0) {
    limits.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
    limits.JobMemoryLimit = static_cast<SIZE_T>(wanted.memory_bytes);
  }
  if (wanted.active_processes != 0) {
    limits.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
    limits.BasicLimitInformation.ActiveProcessLimit = wanted.active_processes;
  }
  if (!SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits, sizeof limits))
    return win32_error("SetInformationJobObject");
  if (DWORD rate = job_cpu_rate(wanted.cpu_millis, GetActiveProcessorCount(ALL_PROCESSOR_GROUPS));
      rate != 0) {
    JOBOBJECT_CPU_RATE_CONTROL_INFORMATION cpu{};
    cpu.ControlFlags = JOB_OBJECT_CPU_RATE_CONTROL_ENABLE | JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP;
    cpu.CpuRate = rate;
    if (!SetInformationJobObject(job.h, JobObjectCpuRateControlInformation, &cpu, sizeof cpu))
      return win32_error("SetInformationJobObject(JobObjectCpuRateControlInformation)");
  }
  // The desktop the block shares with the user (issue 18): no handles to the user's windows, no
  // clipboard either way, no global atoms, no changing display or system settings, no logoff or
  // shutdown, no switching desktops.
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui{};
  ui.UIRestrictionsClass = kJobUiRestrictions;
  if (!SetInformationJobObject(job.h, JobObjectBasicUIRestrictions, &ui, sizeof ui))
    return win32_error("SetInformationJobObject(JobObjectBasicUIRestrictions)");
  return job.release();
}

void CALLBACK on_process_exit(void* context, BOOLEAN /*timed_out*/) {
  auto* self = static_cast<RestrictedProcess*>(context);
  self->deliver_exit();
}

}  // namespace

Status apply_path_acls(const RestrictedTokenPlan& plan) {
  STACKIE_TRY_ASSIGN(token, own_token());
  Handle own(token);
  Caller caller;
  STACKIE_TRY(read_caller(own.h, caller));
  for (const PathAcl& path_acl : plan.path_acls) STACKIE_TRY(apply_one(caller, path_acl));
  return {};
}

Result<AclEdit> acl_without_sid(const void* acl_bytes, const std::string& sid_text) {
  auto* acl = static_cast<PACL>(const_cast<void*>(acl_bytes));
  SidTable sids;
  STACKIE_TRY_ASSIGN(sid, sids.literal(sid_text));
  ACL_SIZE_INFORMATION info{};
  if (!GetAclInformation(acl, &info, sizeof info, AclSizeInformation))
    return win32_error("GetAclInformation");
  AclEdit edit;
  edit.acl.resize(std::max<size_t>(info.AclBytesInUse, sizeof(ACL)));  // it only shrinks
  auto* out = reinterpret_cast<PACL>(edit.acl.data());
  if (!InitializeAcl(out, static_cast<DWORD>(edit.acl.size()), acl->AclRevision))
    return win32_error("InitializeAcl");
  for (DWORD i = 0; i < info.AceCount; ++i) {
    void* ace = nullptr;
    if (!GetAce(acl, i, &ace)) return win32_error("GetAce");
    const auto* header = static_cast<const ACE_HEADER*>(ace);
    PSID ace_sid = nullptr;
    if (header->AceType == ACCESS_ALLOWED_ACE_TYPE)
      ace_sid = &static_cast<ACCESS_ALLOWED_ACE*>(ace)->SidStart;
    else if (header->AceType == ACCESS_DENIED_ACE_TYPE)
      ace_sid = &static_cast<ACCESS_DENIED_ACE*>(ace)->SidStart;
    if (ace_sid && !(header->AceFlags & INHERITED_ACE) && EqualSid(ace_sid, sid)) {
      ++edit.removed;
      continue;
    }
    if (!AddAce(out, acl->AclRevision, MAXDWORD, ace, header->AceSize))
      return win32_error("AddAce");
  }
  return edit;
}

namespace {

Status revoke_one(const AclRevocation& revocation) {
  bool missing = false;
  STACKIE_TRY_ASSIGN(handle,
                     open_granted_path(revocation.path, READ_CONTROL | WRITE_DAC, &missing));
  if (missing) return {};
  Handle owned(handle);
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  DWORD rc = GetSecurityInfo(owned.h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr, nullptr,
                             &dacl, nullptr, &descriptor);
  if (rc != ERROR_SUCCESS) return win32_error("GetSecurityInfo " + revocation.path, rc);
  std::unique_ptr<void, decltype(&LocalFree)> descriptor_owner(descriptor, &LocalFree);
  if (dacl == nullptr) return {};  // a null DACL has no ACE of ours
  SECURITY_DESCRIPTOR_CONTROL control = 0;
  DWORD revision = 0;
  if (!GetSecurityDescriptorControl(descriptor, &control, &revision))
    return win32_error("GetSecurityDescriptorControl " + revocation.path);
  STACKIE_TRY_ASSIGN(edit, acl_without_sid(dacl, revocation.sid));
  if (edit.removed == 0) return {};
  // The path keeps whether it inherits; Windows recomputes what its children inherit.
  SECURITY_INFORMATION what =
      DACL_SECURITY_INFORMATION |
      ((control & SE_DACL_PROTECTED) ? PROTECTED_DACL_SECURITY_INFORMATION
                                     : UNPROTECTED_DACL_SECURITY_INFORMATION);
  rc = SetSecurityInfo(owned.h, SE_FILE_OBJECT, what, nullptr, nullptr,
                       reinterpret_cast<PACL>(edit.acl.data()), nullptr);
  if (rc != ERROR_SUCCESS) return win32_error("SetSecurityInfo " + revocation.path, rc);
  return {};
}

}  // namespace

Status revoke_path_acls(const RestrictedTokenPlan& plan) {
  Status first;
  for (const AclRevocation& revocation : plan_acl_revocations(plan))
    if (Status revoked = revoke_one(revocation); !revoked.ok() && first.ok()) first = revoked;
  return first;
}

RestrictedProcess::~RestrictedProcess() {
  // INVALID_HANDLE_VALUE: wait for a callback already running, so `this` outlives it.
  if (wait_) UnregisterWaitEx(wait_, INVALID_HANDLE_VALUE);
  close_job();
  if (process_) CloseHandle(process_);
  // The desktop goes with its last handle and its last thread (the block's tree is gone).
  if (desktop_) CloseDesktop(static_cast<HDESK>(desktop_));
}

void RestrictedProcess::deliver_exit() {
  DWORD code = 0;
  if (!GetExitCodeProcess(process_, &code)) code = 0xFFFFFFFF;
  if (on_exit_) on_exit_(code);
}

Status RestrictedProcess::terminate(uint32_t exit_code) {
  if (!job_) return Error{0, "the job is already closed"};
  if (!TerminateJobObject(job_, exit_code)) return win32_error("TerminateJobObject");
  return {};
}

Status RestrictedProcess::interrupt() {
  FreeConsole();
  if (!AttachConsole(pid_)) return win32_error("AttachConsole (the block's console)");
  Status sent;
  if (!GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid_))
    sent = win32_error("GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT)");
  FreeConsole();
  return sent;
}

Result<uint32_t> RestrictedProcess::ui_restrictions() const {
  if (!job_) return Error{0, "the job is already closed"};
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui{};
  if (!QueryInformationJobObject(job_, JobObjectBasicUIRestrictions, &ui, sizeof ui, nullptr))
    return win32_error("QueryInformationJobObject(JobObjectBasicUIRestrictions)");
  return static_cast<uint32_t>(ui.UIRestrictionsClass);
}

uint32_t expected_job_ui_restrictions() {
  return kJobUiRestrictions;
}

Status RestrictedProcess::end_job(uint32_t exit_code, uint32_t timeout_ms) {
  constexpr uint32_t kRetryMs = 100;
  if (!job_) return {};
  for (uint32_t waited = 0;; waited += kRetryMs) {
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION accounting{};
    if (!QueryInformationJobObject(job_, JobObjectBasicAccountingInformation, &accounting,
                                   sizeof accounting, nullptr))
      return win32_error("QueryInformationJobObject(JobObjectBasicAccountingInformation)");
    if (accounting.ActiveProcesses == 0) return {};
    if (waited >= timeout_ms)
      return Error{0, std::to_string(accounting.ActiveProcesses) +
                          " processes of the block still run " + std::to_string(timeout_ms) +
                          " ms after its job was ended"};
    TerminateJobObject(job_, exit_code);
    Sleep(kRetryMs);
  }
}

void RestrictedProcess::close_job() {
  if (job_) CloseHandle(job_);
  job_ = nullptr;
}

namespace {

// A desktop of the block's own in our window station, made with the plan's DACL. Its name is
// the plan's followed by 64 random bits: CreateDesktop opens a desktop that exists already,
// DACL and all, so a name that could be guessed could be made beforehand (with a DACL open to
// everyone) by any process of the user's. Each monitor makes its own (an `exec` beside the
// block gets one too). Returns the handle, to hold while the block runs, and "STATION\\NAME"
// for STARTUPINFO::lpDesktop.
struct Desktop {
  HDESK handle = nullptr;
  std::wstring path;
};

Result<Desktop> open_block_desktop(Caller& caller, const BlockDesktop& wanted) {
  wchar_t station[256] = {};
  DWORD needed = 0;
  if (!GetUserObjectInformationW(GetProcessWindowStation(), UOI_NAME, station, sizeof station,
                                 &needed))
    return win32_error("GetUserObjectInformation(window station)");
  STACKIE_TRY_ASSIGN(acl, build_acl(caller, wanted.entries, nullptr));
  SECURITY_DESCRIPTOR descriptor;
  InitializeSecurityDescriptor(&descriptor, SECURITY_DESCRIPTOR_REVISION);
  SetSecurityDescriptorDacl(&descriptor, TRUE, acl, FALSE);
  SECURITY_ATTRIBUTES attributes{sizeof attributes, &descriptor, FALSE};
  Desktop desktop;
  unsigned int random[2] = {};
  if (rand_s(&random[0]) != 0 || rand_s(&random[1]) != 0)
    return Error{0, "no random numbers for the block's desktop name (rand_s)"};
  char suffix[20];
  std::snprintf(suffix, sizeof suffix, "-%08x%08x", random[0], random[1]);
  const std::string unique_name = wanted.name + suffix;
  const std::wstring name = widen(unique_name);
  desktop.handle = CreateDesktopW(name.c_str(), nullptr, nullptr, 0,
                                  access::kDesktopUse | access::kWriteDac, &attributes);
  DWORD error = GetLastError();
  LocalFree(acl);
  if (desktop.handle == nullptr) return win32_error("CreateDesktop " + unique_name, error);
  desktop.path = std::wstring(station) + L"\\" + name;
  return desktop;
}

}  // namespace

Result<std::unique_ptr<RestrictedProcess>> spawn_restricted(
    const RestrictedTokenPlan& plan, const std::vector<std::string>& argv,
    const WindowsStdio& stdio, RestrictedProcess::ExitCallback on_exit) {
  if (argv.empty()) return Error{0, "no command to run"};
  STACKIE_TRY_ASSIGN(token, own_token());
  Handle own(token);
  Caller caller;
  STACKIE_TRY(read_caller(own.h, caller));
  STACKIE_TRY_ASSIGN(restricted_token, create_restricted_token(own.h, caller, plan));
  Handle restricted(restricted_token);
  STACKIE_TRY_ASSIGN(job_handle, create_kill_on_close_job(plan.job_limits));
  Handle job(job_handle);
  STACKIE_TRY_ASSIGN(desktop, open_block_desktop(caller, plan.desktop));
  std::unique_ptr<std::remove_pointer_t<HDESK>, decltype(&CloseDesktop)> desktop_owner(
      desktop.handle, &CloseDesktop);

  // Inheritable duplicates of stdio: the only handles in PROC_THREAD_ATTRIBUTE_HANDLE_LIST, so
  // no other inheritable handle of the daemon reaches the block.
  HANDLE sources[3] = {stdio.input, stdio.output, stdio.error};
  Handle copies[3];
  std::vector<HANDLE> handle_list;
  for (int i = 0; i < 3; ++i) {
    if (!sources[i] || sources[i] == INVALID_HANDLE_VALUE) continue;
    if (!DuplicateHandle(GetCurrentProcess(), sources[i], GetCurrentProcess(), &copies[i].h, 0,
                         TRUE, DUPLICATE_SAME_ACCESS))
      return win32_error("DuplicateHandle (stdio)");
    handle_list.push_back(copies[i].h);
  }
  SIZE_T attribute_size = 0;
  InitializeProcThreadAttributeList(nullptr, 2, 0, &attribute_size);
  std::vector<BYTE> attribute_buffer(attribute_size);
  auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attribute_buffer.data());
  if (!InitializeProcThreadAttributeList(attributes, 2, 0, &attribute_size))
    return win32_error("InitializeProcThreadAttributeList");
  struct AttributeListOwner {
    LPPROC_THREAD_ATTRIBUTE_LIST list;
    ~AttributeListOwner() { DeleteProcThreadAttributeList(list); }
  } attribute_owner{attributes};
  if (!handle_list.empty() &&
      !UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                                 handle_list.data(), handle_list.size() * sizeof(HANDLE), nullptr,
                                 nullptr))
    return win32_error("UpdateProcThreadAttribute(HANDLE_LIST)");
  // The block is in its job from its creation. Assigned after CreateProcess returned, it was in
  // no job for a moment: the daemon's job lets a monitor's children break away, so a monitor
  // terminated then (a health check cancelled by `down`) left a suspended process that nothing
  // would ever end (a Wine run of windows-e2e saw one outlive `down` and the daemon).
  HANDLE jobs[1] = {job.h};
  if (!UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_JOB_LIST, jobs, sizeof jobs,
                                 nullptr, nullptr))
    return win32_error("UpdateProcThreadAttribute(JOB_LIST)");

  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = copies[0].h;
  startup.StartupInfo.hStdOutput = copies[1].h;
  startup.StartupInfo.hStdError = copies[2].h;
  startup.StartupInfo.lpDesktop = desktop.path.data();
  startup.lpAttributeList = attributes;

  // A relative program path ("./tool.exe", "bin\\tool.exe") names a file in the block's working
  // directory, as a shell there would find it. CreateProcess would look in ours instead.
  std::vector<std::string> resolved = argv;
  const std::string& program = argv[0];
  const bool has_separator = program.find_first_of("/\\") != std::string::npos;
  const bool absolute = program.size() > 2 && program[1] == ':';
  if (has_separator && !absolute && program[0] != '/' && program[0] != '\\' &&
      !plan.working_dir.empty())
    resolved[0] = plan.working_dir + "/" + program;
  std::wstring command_line = widen(windows_command_line(resolved));
  std::wstring environment = environment_block(plan);
  std::wstring working_dir = widen(plan.working_dir);
  // A process group of its own, so that CTRL_BREAK to it (interrupt()) reaches the block's
  // processes and no one else; a windowless console of its own, so that a console program gets
  // no window and the user's terminal is never open to it.
  const DWORD flags = CREATE_SUSPENDED | EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT |
                      CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW;
  PROCESS_INFORMATION info{};
  // The token is a restricted copy of our own, so no SeAssignPrimaryTokenPrivilege is needed.
  if (!CreateProcessAsUserW(restricted.h, nullptr, command_line.data(), nullptr, nullptr,
                            !handle_list.empty(), flags, environment.data(),
                            working_dir.empty() ? nullptr : working_dir.c_str(),
                            &startup.StartupInfo, &info))
    return win32_error("CreateProcessAsUser " + argv[0]);
  Handle process(info.hProcess), thread(info.hThread);
  for (Handle& copy : copies) copy.reset();  // the child has its own now

  // A host that ignored the job list (an older Windows, Wine) gets the assignment now: the block
  // never runs outside its job, only this brief window stays open there.
  BOOL in_job = FALSE;
  if (!IsProcessInJob(process.h, job.h, &in_job)) {
    Error error = win32_error("IsProcessInJob");
    TerminateProcess(process.h, 1);  // still suspended: it never ran a single instruction
    return error;
  }
  if (!in_job && !AssignProcessToJobObject(job.h, process.h)) {
    Error error = win32_error("AssignProcessToJobObject");
    TerminateProcess(process.h, 1);
    return error;
  }
  std::unique_ptr<RestrictedProcess> child(new RestrictedProcess());
  child->on_exit_ = std::move(on_exit);
  child->pid_ = info.dwProcessId;
  child->process_ = process.release();
  child->job_ = job.release();
  child->desktop_ = desktop_owner.release();
  if (!RegisterWaitForSingleObject(&child->wait_, child->process_, on_process_exit, child.get(),
                                   INFINITE, WT_EXECUTEONLYONCE)) {
    child->wait_ = nullptr;
    return win32_error("RegisterWaitForSingleObject");  // ~RestrictedProcess kills the job
  }
  if (ResumeThread(thread.h) == static_cast<DWORD>(-1)) return win32_error("ResumeThread");
  return child;
}

}  // namespace stackie
