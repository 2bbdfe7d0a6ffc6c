// Policy -> Windows restricted-token plan (DESIGN.md §5b). Pure code: the plan is computed and
// unit-tested on every OS (tests/sandbox/token_*), and the Windows backend
// (restricted_token_spawn_windows.cc) only carries it out.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/command_line.h"
#include "base/error.h"
#include "policy/policy.h"

namespace stackie {

// A principal in the plan. The caller's user SID and logon SID are known only at spawn time
// (from the daemon's own token), so the plan names them symbolically; every other SID is literal.
struct Principal {
  enum class Kind { user, logon_session, literal };
  Kind kind = Kind::literal;
  std::string sid;  // "S-1-..." when kind == literal

  static Principal user() { return {Kind::user, ""}; }
  static Principal logon_session() { return {Kind::logon_session, ""}; }
  static Principal of(std::string sid_text) { return {Kind::literal, std::move(sid_text)}; }
  bool operator==(const Principal&) const = default;
};

// Well-known SIDs the plan uses.
inline constexpr std::string_view kSidBuiltinUsers = "S-1-5-32-545";
// ALL APPLICATION PACKAGES: Windows grants it read and execute on what every program needs
// (C:\\Windows, System32, Program Files) and nothing on folders a user makes.
inline constexpr std::string_view kSidAllApplicationPackages = "S-1-15-2-1";
inline constexpr std::string_view kSidLocalSystem = "S-1-5-18";

// Windows access masks (winnt.h values; repeated here so pure code needs no Windows header).
namespace access {
inline constexpr uint32_t kFileReadData = 0x0001;    // FILE_READ_DATA / FILE_LIST_DIRECTORY
inline constexpr uint32_t kFileWriteData = 0x0002;   // FILE_WRITE_DATA / FILE_ADD_FILE
inline constexpr uint32_t kFileAppendData = 0x0004;  // FILE_APPEND_DATA / ADD_SUBDIRECTORY
inline constexpr uint32_t kFileReadEa = 0x0008;
inline constexpr uint32_t kFileWriteEa = 0x0010;
inline constexpr uint32_t kFileExecute = 0x0020;  // FILE_EXECUTE / FILE_TRAVERSE
inline constexpr uint32_t kFileDeleteChild = 0x0040;
inline constexpr uint32_t kFileReadAttributes = 0x0080;
inline constexpr uint32_t kFileWriteAttributes = 0x0100;
inline constexpr uint32_t kDelete = 0x00010000;
inline constexpr uint32_t kReadControl = 0x00020000;
inline constexpr uint32_t kWriteDac = 0x00040000;
inline constexpr uint32_t kWriteOwner = 0x00080000;
inline constexpr uint32_t kSynchronize = 0x00100000;
inline constexpr uint32_t kGenericAll = 0x10000000;
// FILE_GENERIC_READ | FILE_GENERIC_EXECUTE: list, read, traverse, run.
inline constexpr uint32_t kReadExecute =
    kFileReadData | kFileReadEa | kFileExecute | kFileReadAttributes | kReadControl | kSynchronize;
// Everything but changing the DACL or owner: a block may not re-open its own directory to
// other blocks.
inline constexpr uint32_t kModify = kReadExecute | kFileWriteData | kFileAppendData | kFileWriteEa |
                                    kFileDeleteChild | kFileWriteAttributes | kDelete;
inline constexpr uint32_t kFullControl = 0x001F01FF;  // FILE_ALL_ACCESS
// A desktop's own rights (winuser.h DESKTOP_*): read and write its windows, menus, hooks, the
// journal, enumerate, create windows and menus; not DESKTOP_SWITCHDESKTOP (0x0100).
inline constexpr uint32_t kDesktopUse = 0x00FF | kReadControl | kSynchronize;
}  // namespace access

// ACE flags (winnt.h): what a child object inherits.
inline constexpr uint8_t kObjectInherit = 0x1;
inline constexpr uint8_t kContainerInherit = 0x2;

struct AclEntry {
  enum class Type { allow, deny };
  Type type = Type::allow;
  Principal who;
  uint32_t mask = 0;
  uint8_t inheritance = 0;  // kObjectInherit | kContainerInherit
  bool operator==(const AclEntry&) const = default;
};

// A path's new DACL, set through a handle to the path itself. `is_protected` blocks inheritance
// from the parent (PROTECTED_DACL_SECURITY_INFORMATION), so nothing above the path can widen it:
// the DACL is replaced, which the plan does only on directories Stackie made (under the storage
// root). Otherwise the entries are merged into the path's DACL and undone when the block ends.
struct PathAcl {
  std::string path;
  bool writable = false;
  bool is_protected = true;
  std::vector<AclEntry> entries;
  bool operator==(const PathAcl&) const = default;
};

enum class StdHandle { input, output, error };

// A desktop of the block's own, in the window station the monitor runs in (issue 18). Windows
// delivers messages, hooks and input only within a desktop, so a block there cannot send input
// to the user's windows, read their text, or hook them; the job's UI limits cover what is
// shared per window station (clipboard, atoms). Its DACL admits the block (block SID: the
// restricting half; logon SID: the normal half) and nobody else but the user.
struct BlockDesktop {
  // "stackie-" + 16 hex digits from the block's name: no '\\', fixed length. The monitor adds
  // 64 random bits, so that no desktop of the name can be made beforehand.
  std::string name;
  std::vector<AclEntry> entries;
  bool operator==(const BlockDesktop&) const = default;
};

// The block's `limits:` as its job enforces them (0 = none). Windows counts differently from a
// cgroup: memory is the commit charge of all the job's processes together
// (JOB_OBJECT_LIMIT_JOB_MEMORY), pids is how many processes may be alive in the job at once
// (JOB_OBJECT_LIMIT_ACTIVE_PROCESS), cpu a hard cap on the job's share of the machine's CPUs
// (JobObjectCpuRateControlInformation, see job_cpu_rate).
struct JobLimits {
  uint64_t memory_bytes = 0;
  uint32_t active_processes = 0;
  uint32_t cpu_millis = 0;  // CPUs x 1000, as ResourceLimits::cpu_millis
  bool operator==(const JobLimits&) const = default;
};

struct RestrictedTokenPlan {
  std::string block_sid;  // derived from the block name, see block_sid_for()
  // CreateRestrictedToken arguments.
  std::vector<Principal> deny_only;          // SidsToDisable: the user's own SID
  std::vector<Principal> restricting_sids;   // SidsToRestrict: block SID, ALL APP PACKAGES
  std::vector<std::string> privileges_kept;  // everything else goes (DISABLE_MAX_PRIVILEGE)
  std::vector<AclEntry> default_dacl;        // TokenDefaultDacl: objects the block creates
  std::vector<PathAcl> path_acls;            // one protected DACL per granted path
  // The block's whole environment, TEMP/TMP last (they point into the block's storage).
  std::vector<std::pair<std::string, std::string>> environment;
  std::string working_dir;
  std::vector<StdHandle> inherited_handles;  // PROC_THREAD_ATTRIBUTE_HANDLE_LIST: stdio only
  BlockDesktop desktop;                      // STARTUPINFO::lpDesktop
  bool kill_on_job_close = true;             // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, no breakaway
  JobLimits job_limits;                      // from SandboxPolicy::limits
  // Windows cannot confine the network without admin rights (DESIGN.md §6): `ps` says so.
  bool network_confined = false;
};

// The per-block SID: "S-1-9-" followed by eight 32-bit sub-authorities, the SHA-256 digest of
// "stackie:" + name read as little-endian words. Authority 9 is
// SECURITY_RESOURCE_MANAGER_AUTHORITY, meant for SIDs that applications define for themselves; the
// kernel gives it no special meaning (unlike capability SIDs, S-1-15-3, which only AppContainer
// tokens match). Deterministic: a restarted daemon finds the ACLs it wrote; distinct per block
// name.
std::string block_sid_for(std::string_view block_name);

// JOBOBJECT_CPU_RATE_CONTROL_INFORMATION::CpuRate for `cpu_millis` on a machine with
// `processors` logical CPUs: the job's share of all of them in 1/100 of a percent, at least 1 and
// at most 10000 (a limit above the machine's CPUs is no limit: 0). Pure, tested on Linux.
uint32_t job_cpu_rate(uint32_t cpu_millis, uint32_t processors);

// Undoing a block's grants when it ends (issue 18): on each path whose DACL was merged into
// rather than replaced, every explicit ACE of the block SID goes. Only Stackie puts that SID in
// a token, so no one else's access changes. The logon SID's ACE stays: other blocks of the
// session may need it for their normal half, and without their own SID in the restricting half
// it lets no block in (every other process with the logon SID is the user's, who has that access
// to the user's paths already).
struct AclRevocation {
  std::string path;
  std::string sid;
  bool operator==(const AclRevocation&) const = default;
};
std::vector<AclRevocation> plan_acl_revocations(const RestrictedTokenPlan& plan);

// The plan. Fails when the policy asks for what this backend cannot honour (extra handles).
Result<RestrictedTokenPlan> plan_restricted_token(const SandboxPolicy& policy);

}  // namespace stackie
