#include "token_access_model.h"

#include <algorithm>

namespace stackie::model {

namespace {

constexpr uint32_t kGenericRead = 0x80000000;
constexpr uint32_t kGenericWrite = 0x40000000;
constexpr uint32_t kGenericExecute = 0x20000000;
// winnt.h FILE_GENERIC_READ / WRITE / EXECUTE.
constexpr uint32_t kFileGenericRead = 0x00120089;
constexpr uint32_t kFileGenericWrite = 0x00120116;
constexpr uint32_t kFileGenericExecute = 0x001200A0;

constexpr std::string_view kLogonPrefix = "S-1-5-5-";

bool contains(const std::vector<std::string>& list, const std::string& sid) {
  return std::find(list.begin(), list.end(), sid) != list.end();
}

// One half of the check. `matches_allow` / `matches_deny` say which ACEs apply to this half.
template <typename AllowMatch, typename DenyMatch>
bool pass(const Object& object, uint32_t desired, bool owner_applies, AllowMatch matches_allow,
          DenyMatch matches_deny) {
  uint32_t granted = owner_applies ? (access::kReadControl | access::kWriteDac) : 0;
  uint32_t denied = 0;
  for (const Ace& ace : object.dacl) {
    if (ace.flags & kInheritOnly) continue;
    const uint32_t mask = map_generic(ace.mask);
    if (ace.type == AclEntry::Type::allow && matches_allow(ace.sid)) {
      granted |= mask & ~denied;
    } else if (ace.type == AclEntry::Type::deny && matches_deny(ace.sid)) {
      denied |= mask & ~granted;
    }
    if ((granted & desired) == desired) return true;
    if (denied & desired) return false;
  }
  return (granted & desired) == desired;
}

}  // namespace

std::string Token::logon_sid() const {
  for (const Group& group : groups)
    if (group.sid.rfind(kLogonPrefix, 0) == 0) return group.sid;
  return "";
}

uint32_t map_generic(uint32_t mask) {
  uint32_t out = mask & 0x0FFFFFFF;
  if (mask & kGenericRead) out |= kFileGenericRead;
  if (mask & kGenericWrite) out |= kFileGenericWrite;
  if (mask & kGenericExecute) out |= kFileGenericExecute;
  if (mask & access::kGenericAll) out |= access::kFullControl;
  return out;
}

bool access_check(const Token& token, const Object& object, uint32_t desired) {
  auto enabled = [&](const std::string& sid) {
    if (sid == token.user) return !token.user_deny_only;
    for (const Group& group : token.groups)
      if (group.sid == sid) return group.enabled && !group.deny_only;
    return false;
  };
  // Deny ACEs also match deny-only SIDs: that is what "deny-only" means.
  auto present = [&](const std::string& sid) {
    if (sid == token.user) return true;
    for (const Group& group : token.groups)
      if (group.sid == sid) return group.enabled || group.deny_only;
    return false;
  };
  if (!pass(object, desired, enabled(object.owner), enabled, present)) return false;
  if (token.restricting_sids.empty()) return true;
  auto restricting = [&](const std::string& sid) { return contains(token.restricting_sids, sid); };
  return pass(object, desired, restricting(object.owner), restricting, restricting);
}

void FileSystem::add_root(const std::string& path, std::vector<Ace> dacl, bool is_directory) {
  objects_[path] = Object{is_directory, "S-1-5-32-544", true, std::move(dacl)};
}

std::vector<Ace> FileSystem::inherited_from(const std::string& parent, bool is_directory) const {
  std::vector<Ace> out;
  auto it = objects_.find(parent);
  if (it == objects_.end()) return out;
  for (const Ace& ace : it->second.dacl) {
    const bool oi = ace.flags & kObjectInherit, ci = ace.flags & kContainerInherit;
    Ace child = ace;
    if (is_directory && ci) {
      child.flags = (ace.flags & (kObjectInherit | kContainerInherit)) | kInherited;
    } else if (is_directory && oi) {
      child.flags = kObjectInherit | kInheritOnly | kInherited;  // passes on to files only
    } else if (!is_directory && oi) {
      child.flags = kInherited;
    } else {
      continue;
    }
    out.push_back(child);
  }
  return out;
}

static std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('\\');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

void FileSystem::create_unchecked(const std::string& owner, const std::string& path,
                                  bool is_directory) {
  objects_[path] =
      Object{is_directory, owner, false, inherited_from(parent_of(path), is_directory)};
}

bool FileSystem::create(const Token& token, const std::string& path, bool is_directory) {
  const std::string parent = parent_of(path);
  auto it = objects_.find(parent);
  if (it == objects_.end() || objects_.count(path)) return false;
  const uint32_t right = is_directory ? access::kFileAppendData : access::kFileWriteData;
  if (!access_check(token, it->second, right)) return false;
  Object object{is_directory, token.user, false, inherited_from(parent, is_directory)};
  if (object.dacl.empty()) object.dacl = token.default_dacl;
  objects_[path] = object;
  return true;
}

void FileSystem::create_kernel_object(const Token& token, const std::string& name) {
  objects_[name] = Object{false, token.user, false, token.default_dacl};
}

bool FileSystem::can(const Token& token, const std::string& path, uint32_t desired) const {
  auto it = objects_.find(path);
  return it != objects_.end() && access_check(token, it->second, desired);
}

void FileSystem::set_dacl(const std::string& path, const std::vector<Ace>& entries,
                          bool is_protected) {
  Object& object = objects_.at(path);
  if (is_protected) {
    object.dacl = entries;
    object.dacl_protected = true;
  } else {
    // Canonical order, as SetEntriesInAcl keeps it: explicit deny, explicit allow, inherited.
    for (const Ace& entry : entries) {
      auto at = std::find_if(object.dacl.begin(), object.dacl.end(), [&entry](const Ace& ace) {
        return (ace.flags & kInherited) ||
               (entry.type == AclEntry::Type::deny && ace.type == AclEntry::Type::allow);
      });
      object.dacl.insert(at, entry);
    }
  }
  propagate(path);
}

void FileSystem::remove_explicit_aces(const std::string& path, const std::string& sid) {
  auto& dacl = objects_.at(path).dacl;
  dacl.erase(std::remove_if(
                 dacl.begin(), dacl.end(),
                 [&sid](const Ace& ace) { return !(ace.flags & kInherited) && ace.sid == sid; }),
             dacl.end());
  propagate(path);
}

void FileSystem::propagate(const std::string& path) {
  const std::string prefix = path + "\\";
  for (auto& [child_path, child] : objects_) {
    if (child_path.rfind(prefix, 0) != 0 || parent_of(child_path) != path) continue;
    if (child.dacl_protected) continue;
    std::vector<Ace> explicit_aces;
    for (const Ace& ace : child.dacl)
      if (!(ace.flags & kInherited)) explicit_aces.push_back(ace);
    std::vector<Ace> inherited = inherited_from(path, child.is_directory);
    explicit_aces.insert(explicit_aces.end(), inherited.begin(), inherited.end());
    child.dacl = explicit_aces;
    propagate(child_path);
  }
}

Token interactive_user_token() {
  Token token;
  token.user = "S-1-5-21-1000-2000-3000-1001";
  token.groups = {
      {"S-1-1-0"},           // Everyone
      {"S-1-2-0"},           // LOCAL
      {"S-1-5-32-545"},      // BUILTIN\Users
      {"S-1-5-4"},           // INTERACTIVE
      {"S-1-5-11"},          // Authenticated Users
      {"S-1-5-15"},          // This Organization
      {"S-1-5-5-0-424242"},  // the logon SID
  };
  token.privileges = {"SeShutdownPrivilege", "SeChangeNotifyPrivilege", "SeUndockPrivilege",
                      "SeIncreaseWorkingSetPrivilege", "SeTimeZonePrivilege"};
  // What Windows gives an interactive logon: user and SYSTEM full, the logon SID read+execute.
  token.default_dacl = {{AclEntry::Type::allow, token.user, access::kGenericAll, 0},
                        {AclEntry::Type::allow, "S-1-5-18", access::kGenericAll, 0},
                        {AclEntry::Type::allow, "S-1-5-5-0-424242", 0xA0000000, 0}};
  return token;
}

static std::string resolve_sid(const Token& user, const Principal& who) {
  switch (who.kind) {
    case Principal::Kind::user: return user.user;
    case Principal::Kind::logon_session: return user.logon_sid();
    case Principal::Kind::literal: return who.sid;
  }
  return "";
}

std::vector<Ace> resolve(const Token& user, const std::vector<AclEntry>& entries) {
  std::vector<Ace> out;
  for (const AclEntry& entry : entries)
    out.push_back(Ace{entry.type, resolve_sid(user, entry.who), entry.mask, entry.inheritance});
  return out;
}

Token restricted_token_from(const Token& user, const RestrictedTokenPlan& plan) {
  Token token = user;
  for (const Principal& who : plan.deny_only) {
    const std::string sid = resolve_sid(user, who);
    if (sid == token.user) token.user_deny_only = true;
    for (Group& group : token.groups)
      if (group.sid == sid) group.deny_only = true;
  }
  token.restricting_sids.clear();
  for (const Principal& who : plan.restricting_sids)
    token.restricting_sids.push_back(resolve_sid(user, who));
  std::vector<std::string> kept;
  for (const std::string& privilege : token.privileges)
    if (contains(plan.privileges_kept, privilege)) kept.push_back(privilege);
  token.privileges = kept;
  token.default_dacl = resolve(user, plan.default_dacl);
  return token;
}

}  // namespace stackie::model
