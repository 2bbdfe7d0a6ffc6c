#include <algorithm>
#include <cctype>
#include <map>

#include "base/sha256.h"
#include "sandbox/restricted_token_plan.h"

namespace stackie {

namespace {

bool same_name_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

constexpr uint8_t kInherit = kObjectInherit | kContainerInherit;

// Windows paths compare without case, with either separator.
std::string path_key(std::string_view path) {
  std::string key;
  for (char c : path) key += c == '\\' ? '/' : char(std::tolower(static_cast<unsigned char>(c)));
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

bool is_at_or_below(std::string_view path, std::string_view root) {
  if (root.empty()) return false;
  std::string p = path_key(path), r = path_key(root);
  return p == r || (p.size() > r.size() && p.compare(0, r.size(), r) == 0 && p[r.size()] == '/');
}

// A writable grant on a directory Stackie made for the block (under the storage root): the path
// becomes the block's own. The DACL is protected (nothing inherited from the parent can add a
// principal) and lists exactly: SYSTEM and the user (full control, so the user and the OS keep
// managing their files; neither can satisfy the block token's restricting half), the logon SID
// (satisfies the normal half: the user SID is deny-only in the block's token) and the block SID
// (satisfies the restricting half for this block only). No BUILTIN\Users ACE: Users is not a
// restricting SID of any block (DESIGN.md §5b, refinement 2).
PathAcl owned_writable_acl(const std::string& path, const std::string& block_sid) {
  return PathAcl{path,
                 /*writable=*/true,
                 /*is_protected=*/true,
                 {
                     {AclEntry::Type::allow, Principal::of(std::string(kSidLocalSystem)),
                      access::kFullControl, kInherit},
                     {AclEntry::Type::allow, Principal::user(), access::kFullControl, kInherit},
                     {AclEntry::Type::allow, Principal::logon_session(), access::kModify, kInherit},
                     {AclEntry::Type::allow, Principal::of(block_sid), access::kModify, kInherit},
                 }};
}

// A writable grant on a directory of the user's (the project directory of a first-party block):
// its DACL is the user's, so two ACEs are merged in rather than the DACL replaced, and the
// block's is taken out again when the block ends (plan_acl_revocations). Other blocks stay out:
// their restricting half needs their own SID, which nothing here grants.
PathAcl users_writable_acl(const std::string& path, const std::string& block_sid) {
  return PathAcl{path,
                 /*writable=*/true,
                 /*is_protected=*/false,
                 {
                     {AclEntry::Type::allow, Principal::logon_session(), access::kModify, kInherit},
                     {AclEntry::Type::allow, Principal::of(block_sid), access::kModify, kInherit},
                 }};
}

// What a read-only grant denies the block even where a writable grant above it (the project
// directory) would let it write: the stack file and the other paths the loader binds read-only
// on top of the project (issue 14), as Linux mounts them read-only.
constexpr uint32_t kWriteRights = access::kFileWriteData | access::kFileAppendData |
                                  access::kFileWriteEa | access::kFileWriteAttributes |
                                  access::kDelete;

// A read-only grant is usually a program's install directory shared by several blocks (and
// readable by BUILTIN\Users already) or the user's own sources. Replacing its DACL would lock out
// administrators and other blocks, so the read ACEs are merged into the existing DACL instead
// (is_protected = false), with a deny of writing for the block SID first. Another block can
// then read it only where BUILTIN\Users could already read it.
PathAcl read_only_acl(const std::string& path, const std::string& block_sid) {
  return PathAcl{
      path,
      /*writable=*/false,
      /*is_protected=*/false,
      {
          {AclEntry::Type::deny, Principal::of(block_sid), kWriteRights, kInherit},
          {AclEntry::Type::allow, Principal::logon_session(), access::kReadExecute, kInherit},
          {AclEntry::Type::allow, Principal::of(block_sid), access::kReadExecute, kInherit},
      }};
}

}  // namespace

Result<RestrictedTokenPlan> plan_restricted_token(const SandboxPolicy& policy) {
  if (policy.name.empty()) return Error{0, "restricted token: the sandbox has no name"};
  if (policy.host_tmp_dir.empty())
    return Error{0, "restricted token: '" + policy.name +
                        "' needs host_tmp_dir (TEMP/TMP must point into the block's storage)"};
  if (!policy.pass_fds.empty())
    return Error{0, "restricted token: '" + policy.name +
                        "' asks for extra inherited handles; only stdio is passed on Windows"};

  RestrictedTokenPlan plan;
  plan.block_sid = block_sid_for(policy.name);
  plan.deny_only = {Principal::user()};
  // Not SYSTEM (DESIGN.md §5b, refinement 1): it has full control on nearly every ACL, so it
  // would satisfy the restricting half almost everywhere.
  // Not BUILTIN\Users either (issue 18): Users can read whatever a user makes outside the
  // profile (C:\src inherits "Users: read" from C:\), so with Users restricting, a block
  // could read it. ALL APPLICATION PACKAGES is granted on the system's own directories only; the
  // access-check model (tests/sandbox/token_access_model_test.cc) shows both.
  plan.restricting_sids = {Principal::of(plan.block_sid),
                           Principal::of(std::string(kSidAllApplicationPackages))};
  plan.privileges_kept = {"SeChangeNotifyPrivilege"};
  // New objects without an inheritable parent ACL (the process, its threads, pipes, events)
  // get this DACL: the block SID lets the block open what it created (restricting half), the
  // logon SID the normal half; user and SYSTEM let the daemon and the OS manage them.
  plan.default_dacl = {
      {AclEntry::Type::allow, Principal::user(), access::kGenericAll, 0},
      {AclEntry::Type::allow, Principal::of(std::string(kSidLocalSystem)), access::kGenericAll, 0},
      {AclEntry::Type::allow, Principal::logon_session(), access::kGenericAll, 0},
      {AclEntry::Type::allow, Principal::of(plan.block_sid), access::kGenericAll, 0},
  };

  // One ACL per distinct host path; a path granted both ways is writable.
  std::map<std::string, bool> grants;  // path -> writable; ordered, so the plan is stable
  for (const auto& bind : policy.read_only) grants.emplace(bind.source, false);
  for (const auto& bind : policy.read_write) grants[bind.source] = true;
  grants[policy.host_tmp_dir] = true;
  for (const auto& [path, writable] : grants) {
    if (!writable)
      plan.path_acls.push_back(read_only_acl(path, plan.block_sid));
    else if (is_at_or_below(path, policy.storage_root) || path == policy.host_tmp_dir)
      plan.path_acls.push_back(owned_writable_acl(path, plan.block_sid));
    else
      plan.path_acls.push_back(users_writable_acl(path, plan.block_sid));
  }

  for (const auto& entry : policy.environment)
    if (!same_name_ignoring_case(entry.first, "TEMP") &&
        !same_name_ignoring_case(entry.first, "TMP"))
      plan.environment.push_back(entry);
  plan.environment.emplace_back("TEMP", policy.host_tmp_dir);
  plan.environment.emplace_back("TMP", policy.host_tmp_dir);

  plan.working_dir = policy.working_dir.empty() ? policy.host_tmp_dir : policy.working_dir;
  plan.inherited_handles = {StdHandle::input, StdHandle::output, StdHandle::error};
  plan.desktop.name = "stackie-";
  const auto digest = sha256("stackie-desktop:" + policy.name);
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 8; ++i) {
    plan.desktop.name += kHex[digest[i] >> 4];
    plan.desktop.name += kHex[digest[i] & 15];
  }
  plan.desktop.entries = {
      {AclEntry::Type::allow, Principal::user(), access::kDesktopUse | access::kWriteDac, 0},
      {AclEntry::Type::allow, Principal::logon_session(), access::kDesktopUse, 0},
      {AclEntry::Type::allow, Principal::of(plan.block_sid), access::kDesktopUse, 0},
  };
  plan.kill_on_job_close = true;
  plan.job_limits.memory_bytes = policy.limits.memory_bytes;
  plan.job_limits.active_processes = static_cast<uint32_t>(std::max(policy.limits.pids, 0));
  plan.job_limits.cpu_millis = static_cast<uint32_t>(std::max(policy.limits.cpu_millis, 0));
  plan.network_confined = false;
  return plan;
}

std::vector<AclRevocation> plan_acl_revocations(const RestrictedTokenPlan& plan) {
  std::vector<AclRevocation> revocations;
  for (const PathAcl& acl : plan.path_acls)
    if (!acl.is_protected) revocations.push_back({acl.path, plan.block_sid});
  return revocations;
}

uint32_t job_cpu_rate(uint32_t cpu_millis, uint32_t processors) {
  if (cpu_millis == 0 || processors == 0) return 0;
  uint64_t all = uint64_t{processors} * 1000;
  if (cpu_millis >= all) return 0;
  uint64_t rate = uint64_t{cpu_millis} * 10000 / all;
  return static_cast<uint32_t>(std::max<uint64_t>(rate, 1));
}

}  // namespace stackie
