// A model of the Windows access check, for proving on Linux what a RestrictedTokenPlan grants.
// Follows "How AccessCheck works" and "Restricted tokens" (learn.microsoft.com): a restricted
// token passes only when BOTH the normal check (enabled groups; deny-only SIDs match deny ACEs
// only) and a second check with the restricting SIDs grant every desired bit. ACEs are walked in
// order; an ACE whose bits were already granted cannot deny them, and vice versa. Objects
// inherit the inheritable ACEs of their parent unless their DACL is protected; an object whose
// parent passes nothing on gets the creating token's default DACL.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/restricted_token_plan.h"

namespace stackie::model {

inline constexpr uint8_t kInheritOnly = 0x8;
inline constexpr uint8_t kInherited = 0x10;

struct Ace {
  AclEntry::Type type = AclEntry::Type::allow;
  std::string sid;
  uint32_t mask = 0;
  uint8_t flags = 0;  // kObjectInherit | kContainerInherit | kInheritOnly | kInherited
};

struct Group {
  std::string sid;
  bool enabled = true;
  bool deny_only = false;
};

struct Token {
  std::string user;
  bool user_deny_only = false;
  std::vector<Group> groups;
  std::vector<std::string> restricting_sids;  // empty: not a restricted token
  std::vector<std::string> privileges;
  std::vector<Ace> default_dacl;
  std::string logon_sid() const;
};

struct Object {
  bool is_directory = false;
  std::string owner;
  bool dacl_protected = false;
  std::vector<Ace> dacl;
};

// FILE_GENERIC_* for GENERIC_* bits, as the file system maps them before the check.
uint32_t map_generic(uint32_t mask);

// Both halves of the access check for `desired` (already mapped) on `object`.
bool access_check(const Token& token, const Object& object, uint32_t desired);

// A tree of objects keyed by path ("C:\\Users\\dev"); the parent is the path up to the last '\'.
class FileSystem {
 public:
  void add_root(const std::string& path, std::vector<Ace> dacl, bool is_directory = true);
  // Creates `path` as `token` would: the parent must grant FILE_ADD_FILE / ADD_SUBDIRECTORY.
  bool create(const Token& token, const std::string& path, bool is_directory);
  // Creates `path` with the DACL it inherits, without an access check (the host's own setup).
  void create_unchecked(const std::string& owner, const std::string& path, bool is_directory);
  // A named kernel object (event, pipe) with no parent: it gets the token's default DACL.
  void create_kernel_object(const Token& token, const std::string& name);
  bool can(const Token& token, const std::string& path, uint32_t desired) const;
  // SetNamedSecurityInfoW: protected = replace and stop inheritance; otherwise merge the new
  // explicit ACEs after the existing explicit ones. Children re-inherit.
  void set_dacl(const std::string& path, const std::vector<Ace>& entries, bool is_protected);
  // What revoking a block's grant does (AclRevocation): every explicit ACE of `sid` goes from
  // the path's DACL, and the change is inherited below it.
  void remove_explicit_aces(const std::string& path, const std::string& sid);
  const Object& at(const std::string& path) const { return objects_.at(path); }

 private:
  std::vector<Ace> inherited_from(const std::string& parent, bool is_directory) const;
  void propagate(const std::string& path);
  std::map<std::string, Object> objects_;
};

// The logged-on developer of the fixture, and what CreateRestrictedToken makes of it for `plan`.
Token interactive_user_token();
Token restricted_token_from(const Token& user, const RestrictedTokenPlan& plan);
// The plan's ACL entries with the user / logon principals filled in from `user`.
std::vector<Ace> resolve(const Token& user, const std::vector<AclEntry>& entries);

}  // namespace stackie::model
