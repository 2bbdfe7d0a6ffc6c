// Proves, against a model of the Windows dual access check, what plans from
// plan_restricted_token() grant and deny (issue 8), and shows with two negative controls why
// DESIGN.md §5b refines the mechanism (no SYSTEM restricting SID, no blanket Users ACE).
#include <gtest/gtest.h>

#include "sandbox/restricted_token_plan.h"
#include "token_access_model.h"

namespace stackie {
namespace {

using model::Ace;
using model::FileSystem;
using model::Token;

constexpr uint32_t kRead = access::kFileReadData | access::kFileReadAttributes;
constexpr uint32_t kWrite = access::kFileWriteData;
constexpr uint8_t kOiCi = kObjectInherit | kContainerInherit;
constexpr AclEntry::Type kAllow = AclEntry::Type::allow;
constexpr AclEntry::Type kDeny = AclEntry::Type::deny;

const std::string kAdmins = "S-1-5-32-544";
const std::string kSystem = "S-1-5-18";
const std::string kUsers = "S-1-5-32-545";
const std::string kAuthenticatedUsers = "S-1-5-11";
const std::string kTrustedInstaller =
    "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464";
const std::string kAllAppPackages = "S-1-15-2-1";

const std::string kHome = "C:\\Users\\dev";
const std::string kStorage = kHome + "\\.stackie\\storage";
const std::string kDataA = kStorage + "\\volumes\\demo\\a-data";
const std::string kDataB = kStorage + "\\volumes\\demo\\b-data";
const std::string kTmpA = kStorage + "\\tmp\\demo-a";
const std::string kTmpB = kStorage + "\\tmp\\demo-b";
const std::string kPostgres = "C:\\Program Files\\PostgreSQL";
const std::string kSources = kHome + "\\src\\api";
const std::string kSystem32 = "C:\\Windows\\System32";

// A Windows-like host: ACLs as a fresh Windows 10/11 install has them (icacls output).
FileSystem host(const Token& user) {
  FileSystem fs;
  // C:\ — Users read; Authenticated Users may create folders here and modify what is below.
  fs.add_root("C:", {{kAllow, kAdmins, access::kFullControl, kOiCi},
                     {kAllow, kSystem, access::kFullControl, kOiCi},
                     {kAllow, kUsers, access::kReadExecute, kOiCi},
                     {kAllow, kAuthenticatedUsers, access::kFileAppendData, 0},
                     {kAllow, kAuthenticatedUsers, access::kModify, kOiCi | model::kInheritOnly}});
  const std::vector<Ace> system_like = {{kAllow, kTrustedInstaller, access::kFullControl, kOiCi},
                                        {kAllow, kSystem, access::kModify, kOiCi},
                                        {kAllow, kAdmins, access::kModify, kOiCi},
                                        {kAllow, kUsers, access::kReadExecute, kOiCi},
                                        {kAllow, kAllAppPackages, access::kReadExecute, kOiCi}};
  fs.add_root(kSystem32, system_like);
  fs.create_unchecked(kTrustedInstaller, kSystem32 + "\\kernel32.dll", false);
  fs.add_root(kPostgres, system_like);
  fs.create_unchecked(kTrustedInstaller, kPostgres + "\\bin", true);
  fs.create_unchecked(kTrustedInstaller, kPostgres + "\\bin\\postgres.exe", false);
  // The profile: only SYSTEM, Administrators and the user.
  fs.add_root(kHome, {{kAllow, kSystem, access::kFullControl, kOiCi},
                      {kAllow, kAdmins, access::kFullControl, kOiCi},
                      {kAllow, user.user, access::kFullControl, kOiCi}});
  for (const std::string& dir :
       {kHome + "\\src", kSources, kHome + "\\.stackie", kStorage, kStorage + "\\volumes",
        kStorage + "\\volumes\\demo", kDataA, kDataB, kStorage + "\\tmp", kTmpA, kTmpB})
    fs.create_unchecked(user.user, dir, true);
  fs.create_unchecked(user.user, kHome + "\\secret.txt", false);
  fs.create_unchecked(user.user, kSources + "\\main.py", false);
  fs.create_unchecked(user.user, kDataA + "\\PG_VERSION", false);
  return fs;
}

SandboxPolicy block_policy(const std::string& name, const std::string& data,
                           const std::string& tmp) {
  SandboxPolicy policy;
  policy.name = name;
  policy.read_only = {{kPostgres, ""}};
  policy.read_write = {{data, ""}};
  policy.host_tmp_dir = tmp;
  policy.storage_root = kStorage;
  return policy;
}

RestrictedTokenPlan plan_for(const SandboxPolicy& policy) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() ? *plan : RestrictedTokenPlan{};
}

void apply(FileSystem& fs, const Token& user, const RestrictedTokenPlan& plan) {
  for (const PathAcl& acl : plan.path_acls)
    fs.set_dacl(acl.path, model::resolve(user, acl.entries), acl.is_protected);
}

// Two blocks of one stack, planned and applied as the daemon would.
struct TwoBlocks {
  Token user = model::interactive_user_token();
  FileSystem fs = host(user);
  RestrictedTokenPlan plan_a, plan_b;
  Token a, b;

  explicit TwoBlocks(void (*tamper)(RestrictedTokenPlan&) = nullptr) {
    SandboxPolicy policy_a = block_policy("demo-a", kDataA, kTmpA);
    policy_a.read_only.push_back({kSources, ""});
    plan_a = plan_for(policy_a);
    plan_b = plan_for(block_policy("demo-b", kDataB, kTmpB));
    if (tamper) {
      tamper(plan_a);
      tamper(plan_b);
    }
    apply(fs, user, plan_a);
    apply(fs, user, plan_b);
    a = model::restricted_token_from(user, plan_a);
    b = model::restricted_token_from(user, plan_b);
  }
};

// --- the model itself behaves like Windows on small cases -----------------------------------

TEST(TokenModel, DenyAceBeforeAllowWinsAndDenyOnlyMatchesDenyAcesOnly) {
  Token token = model::interactive_user_token();
  model::Object object{
      false, kAdmins, false, {{kDeny, kUsers, kWrite, 0}, {kAllow, kUsers, kRead | kWrite, 0}}};
  EXPECT_TRUE(model::access_check(token, object, kRead));
  EXPECT_FALSE(model::access_check(token, object, kWrite));

  model::Object allows_user{false, kAdmins, false, {{kAllow, token.user, kRead, 0}}};
  model::Object denies_user{
      false, kAdmins, false, {{kDeny, token.user, kRead, 0}, {kAllow, kUsers, kRead, 0}}};
  EXPECT_TRUE(model::access_check(token, allows_user, kRead));
  token.user_deny_only = true;
  EXPECT_FALSE(model::access_check(token, allows_user, kRead)) << "deny-only never grants";
  EXPECT_FALSE(model::access_check(token, denies_user, kRead)) << "deny-only still denies";
}

TEST(TokenModel, RestrictedTokenNeedsBothHalves) {
  Token token = model::interactive_user_token();
  token.restricting_sids = {"S-1-9-1"};
  model::Object normal_only{false, kAdmins, false, {{kAllow, kUsers, kRead, 0}}};
  model::Object restricting_only{false, kAdmins, false, {{kAllow, "S-1-9-1", kRead, 0}}};
  model::Object both{
      false, kAdmins, false, {{kAllow, kUsers, kRead, 0}, {kAllow, "S-1-9-1", kRead, 0}}};
  EXPECT_FALSE(model::access_check(token, normal_only, kRead));
  EXPECT_FALSE(model::access_check(token, restricting_only, kRead));
  EXPECT_TRUE(model::access_check(token, both, kRead));
}

TEST(TokenModel, HostFixtureGivesTheUserItsUsualRights) {
  Token user = model::interactive_user_token();
  FileSystem fs = host(user);
  EXPECT_TRUE(fs.can(user, kHome + "\\secret.txt", kRead | kWrite));
  EXPECT_TRUE(fs.can(user, kSystem32 + "\\kernel32.dll", kRead));
  EXPECT_FALSE(fs.can(user, kSystem32 + "\\kernel32.dll", kWrite));
  EXPECT_TRUE(fs.create(user, "C:\\tools", true)) << "Authenticated Users may add folders to C:\\";
}

// --- the properties of issue 8 ----------------------------------------------------------------

TEST(TokenIsolation, TheUsersOwnFilesAreDenied) {
  TwoBlocks blocks;
  EXPECT_FALSE(blocks.fs.can(blocks.a, kHome + "\\secret.txt", kRead));
  EXPECT_FALSE(blocks.fs.can(blocks.a, kHome + "\\secret.txt", kWrite));
  EXPECT_FALSE(blocks.fs.create(blocks.a, kHome + "\\dropped.txt", false));
  EXPECT_TRUE(blocks.fs.can(blocks.user, kHome + "\\secret.txt", kRead)) << "the user still can";
}

TEST(TokenIsolation, AGrantedPathIsReadableAndWritableByItsBlock) {
  TwoBlocks blocks;
  EXPECT_TRUE(blocks.fs.can(blocks.a, kDataA, kRead | access::kFileAppendData));
  EXPECT_TRUE(blocks.fs.can(blocks.a, kDataA + "\\PG_VERSION", kRead | kWrite))
      << "files already there re-inherit the new DACL";
  ASSERT_TRUE(blocks.fs.create(blocks.a, kDataA + "\\base", true));
  ASSERT_TRUE(blocks.fs.create(blocks.a, kDataA + "\\base\\1", false));
  EXPECT_TRUE(blocks.fs.can(blocks.a, kDataA + "\\base\\1", kRead | kWrite | access::kDelete));
  EXPECT_TRUE(blocks.fs.can(blocks.a, kTmpA, kRead | access::kFileAppendData));
  EXPECT_FALSE(blocks.fs.can(blocks.a, kDataA, access::kWriteDac))
      << "the block cannot reopen its directory to others";
  EXPECT_TRUE(blocks.fs.can(blocks.user, kDataA + "\\base\\1", kRead | kWrite))
      << "the user (daemon) keeps managing block storage";
}

TEST(TokenIsolation, TheSamePathIsDeniedToAnotherBlock) {
  TwoBlocks blocks;
  ASSERT_TRUE(blocks.fs.create(blocks.a, kDataA + "\\made-by-a", false));
  for (const std::string& path : {kDataA, kDataA + "\\PG_VERSION", kDataA + "\\made-by-a", kTmpA}) {
    EXPECT_FALSE(blocks.fs.can(blocks.b, path, kRead)) << path;
    EXPECT_FALSE(blocks.fs.can(blocks.b, path, kWrite)) << path;
  }
  EXPECT_FALSE(blocks.fs.create(blocks.b, kDataA + "\\made-by-b", false));
  EXPECT_FALSE(blocks.fs.can(blocks.a, kDataB, kRead)) << "and the other way round";
  EXPECT_TRUE(blocks.fs.can(blocks.b, kDataB, kRead | access::kFileAppendData));
}

TEST(TokenIsolation, ReadOnlyGrantsReadButNeverWrite) {
  TwoBlocks blocks;
  EXPECT_TRUE(blocks.fs.can(blocks.a, kSources + "\\main.py", kRead));
  EXPECT_FALSE(blocks.fs.can(blocks.a, kSources + "\\main.py", kWrite));
  EXPECT_FALSE(blocks.fs.create(blocks.a, kSources + "\\new.py", false));
  EXPECT_FALSE(blocks.fs.can(blocks.b, kSources + "\\main.py", kRead))
      << "B was not granted A's sources";
  EXPECT_TRUE(blocks.fs.can(blocks.user, kSources + "\\main.py", kRead | kWrite))
      << "merging keeps the user's own rights";
  EXPECT_TRUE(
      blocks.fs.can(blocks.a, kPostgres + "\\bin\\postgres.exe", kRead | access::kFileExecute));
  EXPECT_TRUE(
      blocks.fs.can(blocks.b, kPostgres + "\\bin\\postgres.exe", kRead | access::kFileExecute))
      << "a shared install directory stays usable by every block";
  EXPECT_FALSE(blocks.fs.can(blocks.a, kPostgres + "\\bin\\postgres.exe", kWrite));
}

void revoke(FileSystem& fs, const RestrictedTokenPlan& plan) {
  for (const AclRevocation& revocation : plan_acl_revocations(plan))
    fs.remove_explicit_aces(revocation.path, revocation.sid);
}

// A first-party block writes the project directory, a folder of the user's (issue 18): its
// DACL is merged into, not replaced, the stack file bound read-only on top stays unwritable,
// and when the block ends its grant is taken out again.
TEST(TokenIsolation, TheProjectDirectoryIsGrantedWithAnAceThatIsRemovedAtTheEnd) {
  Token user = model::interactive_user_token();
  FileSystem fs = host(user);
  const std::string stack_file = kSources + "\\stackie-stack.yml";
  fs.create_unchecked(user.user, stack_file, false);
  SandboxPolicy policy = block_policy("demo-a", kDataA, kTmpA);
  policy.read_write.push_back({kSources, ""});
  policy.read_only.push_back({stack_file, ""});
  RestrictedTokenPlan plan = plan_for(policy);
  apply(fs, user, plan);
  Token a = model::restricted_token_from(user, plan);
  Token b = model::restricted_token_from(user, plan_for(block_policy("demo-b", kDataB, kTmpB)));

  EXPECT_FALSE(fs.at(kSources).dacl_protected) << "the user's folder still inherits";
  EXPECT_TRUE(fs.can(a, kSources + "\\main.py", kRead | kWrite));
  EXPECT_TRUE(fs.create(a, kSources + "\\build.log", false));
  EXPECT_TRUE(fs.can(a, stack_file, kRead));
  EXPECT_FALSE(fs.can(a, stack_file, kWrite)) << "read-only on top of a writable project";
  EXPECT_FALSE(fs.can(a, stack_file, access::kFileAppendData));
  EXPECT_FALSE(fs.can(b, kSources + "\\main.py", kRead)) << "another block stays out";

  revoke(fs, plan);
  Token a_again = model::restricted_token_from(user, plan);
  for (const std::string& path : {kSources, kSources + "\\main.py", kSources + "\\build.log"}) {
    EXPECT_FALSE(fs.can(a_again, path, kRead)) << path << ": the grant is gone";
    EXPECT_TRUE(fs.can(user, path, kRead | kWrite)) << path << ": the user keeps everything";
  }
  EXPECT_FALSE(fs.can(a_again, stack_file, kRead));
  for (const Ace& ace : fs.at(kSources).dacl) EXPECT_NE(ace.sid, plan.block_sid);
  for (const Ace& ace : fs.at(stack_file).dacl) EXPECT_NE(ace.sid, plan.block_sid);
}

// Storage is Stackie's: there the DACL is replaced (protected) and revocation leaves it alone;
// a shared read-only directory keeps serving the blocks that still run.
TEST(TokenIsolation, RevokingOneBlockLeavesStorageAndTheOtherBlocksGrants) {
  TwoBlocks blocks;
  for (const AclRevocation& revocation : plan_acl_revocations(blocks.plan_a)) {
    EXPECT_NE(revocation.path, kDataA) << "storage is not revoked: it is the block's own";
    EXPECT_NE(revocation.path, kTmpA);
    EXPECT_EQ(revocation.sid, blocks.plan_a.block_sid);
  }
  revoke(blocks.fs, blocks.plan_a);
  EXPECT_TRUE(
      blocks.fs.can(blocks.b, kPostgres + "\\bin\\postgres.exe", kRead | access::kFileExecute))
      << "B still runs its program";
  EXPECT_FALSE(blocks.fs.can(blocks.a, kSources + "\\main.py", kRead));
  EXPECT_TRUE(blocks.fs.can(blocks.a, kDataA + "\\PG_VERSION", kRead | kWrite))
      << "the block's own storage keeps its DACL for the next start";
}

TEST(TokenIsolation, SystemLibrariesAreReadable) {
  TwoBlocks blocks;
  EXPECT_TRUE(blocks.fs.can(blocks.a, kSystem32, kRead | access::kFileExecute));
  EXPECT_TRUE(blocks.fs.can(blocks.a, kSystem32 + "\\kernel32.dll", kRead | access::kFileExecute));
  EXPECT_FALSE(blocks.fs.can(blocks.a, kSystem32 + "\\kernel32.dll", kWrite));
  EXPECT_FALSE(blocks.fs.create(blocks.a, kSystem32 + "\\evil.dll", false));
}

// A folder the user made outside the profile (C:\src inherits "Users: read" from C:\): the
// block must not read it. Restricting SID ALL APPLICATION PACKAGES, which only the system's own
// directories grant, keeps it out while System32 and Program Files stay readable (above).
TEST(TokenIsolation, AFolderTheUserMadeOutsideTheProfileIsDenied) {
  TwoBlocks blocks;
  blocks.fs.create_unchecked(blocks.user.user, "C:\\src", true);
  blocks.fs.create_unchecked(blocks.user.user, "C:\\src\\main.c", false);
  EXPECT_TRUE(blocks.fs.can(blocks.user, "C:\\src\\main.c", kRead)) << "control: the user reads it";
  EXPECT_FALSE(blocks.fs.can(blocks.a, "C:\\src\\main.c", kRead));
  EXPECT_FALSE(blocks.fs.can(blocks.a, "C:\\src", kRead));
}

TEST(TokenIsolation, CreatingAFolderInTheDriveRootIsDenied) {
  TwoBlocks blocks;
  EXPECT_FALSE(blocks.fs.create(blocks.a, "C:\\stackie-escape", true));
  EXPECT_FALSE(blocks.fs.create(blocks.a, "C:\\escape.txt", false));
  EXPECT_TRUE(blocks.fs.create(blocks.user, "C:\\stackie-escape", true))
      << "control: the unrestricted user can (Authenticated Users), the restricting half stops A";
}

TEST(TokenIsolation, ObjectsTheBlockCreatesAreItsOwn) {
  TwoBlocks blocks;
  blocks.fs.create_kernel_object(blocks.a, "\\Sessions\\1\\BaseNamedObjects\\pg-a");
  const std::string event = "\\Sessions\\1\\BaseNamedObjects\\pg-a";
  EXPECT_TRUE(blocks.fs.can(blocks.a, event, access::kSynchronize | kRead | kWrite));
  EXPECT_FALSE(blocks.fs.can(blocks.b, event, access::kSynchronize));
  EXPECT_TRUE(blocks.fs.can(blocks.user, event, access::kSynchronize)) << "the daemon can wait";
  // With the logon session's default DACL unchanged the block could not open its own objects.
  Token unchanged = blocks.a;
  unchanged.default_dacl = blocks.user.default_dacl;
  blocks.fs.create_kernel_object(unchanged, "\\Sessions\\1\\BaseNamedObjects\\plain");
  EXPECT_FALSE(
      blocks.fs.can(unchanged, "\\Sessions\\1\\BaseNamedObjects\\plain", access::kSynchronize));
}

TEST(TokenIsolation, PrivilegesAreGoneButChangeNotify) {
  TwoBlocks blocks;
  EXPECT_EQ(blocks.a.privileges, std::vector<std::string>{"SeChangeNotifyPrivilege"});
  EXPECT_TRUE(blocks.a.user_deny_only);
}

// --- negative controls: the first description of the mechanism leaks across blocks -----------

TEST(TokenNegativeControl, SystemAsRestrictingSidLetsBlockBIntoBlockA) {
  TwoBlocks blocks([](RestrictedTokenPlan& plan) {
    plan.restricting_sids.push_back(Principal::of(std::string(kSidLocalSystem)));
  });
  // The cross-block property FAILS: SYSTEM's full-control ACE satisfies B's restricting half,
  // the logon SID (shared by all blocks) its normal half.
  EXPECT_TRUE(blocks.fs.can(blocks.b, kDataA + "\\PG_VERSION", kRead | kWrite));
  EXPECT_TRUE(blocks.fs.can(blocks.b, kTmpA, kRead));
}

TEST(TokenNegativeControl, UsersAsRestrictingSidReadsTheUsersFoldersOutsideTheProfile) {
  TwoBlocks blocks([](RestrictedTokenPlan& plan) {
    for (Principal& who : plan.restricting_sids)
      if (who.sid == kSidAllApplicationPackages) who = Principal::of(std::string(kSidBuiltinUsers));
  });
  blocks.fs.create_unchecked(blocks.user.user, "C:\\src", true);
  blocks.fs.create_unchecked(blocks.user.user, "C:\\src\\main.c", false);
  // The plan before issue 18: Users' inherited read ACE satisfies the restricting half, the
  // user's own groups the normal half.
  EXPECT_TRUE(blocks.fs.can(blocks.a, "C:\\src\\main.c", kRead));
}

TEST(TokenNegativeControl, BlanketSharedSidAceOnGrantedPathsLetsBlockBIntoBlockA) {
  TwoBlocks blocks([](RestrictedTokenPlan& plan) {
    for (PathAcl& acl : plan.path_acls)
      acl.entries.push_back({AclEntry::Type::allow,
                             Principal::of(std::string(kSidAllApplicationPackages)),
                             access::kModify, kObjectInherit | kContainerInherit});
  });
  // FAILS too: ALL APPLICATION PACKAGES (BUILTIN\Users before issue 18) is a restricting SID of
  // every block, and the user's own groups pass the normal half.
  EXPECT_TRUE(blocks.fs.can(blocks.b, kDataA + "\\PG_VERSION", kRead | kWrite));
}

// --- a desktop of the block's own (issue 18) --------------------------------------------------

TEST(TokenIsolation, EachBlockUsesItsOwnDesktopAndNoOtherBlockCanOpenIt) {
  TwoBlocks blocks;
  auto desktop_of = [&](const RestrictedTokenPlan& plan) {
    return model::Object{false, blocks.user.user, false,
                         model::resolve(blocks.user, plan.desktop.entries)};
  };
  const uint32_t use = access::kDesktopUse;
  EXPECT_TRUE(model::access_check(blocks.a, desktop_of(blocks.plan_a), use));
  EXPECT_TRUE(model::access_check(blocks.b, desktop_of(blocks.plan_b), use));
  EXPECT_FALSE(model::access_check(blocks.b, desktop_of(blocks.plan_a), access::kReadControl))
      << "B cannot even open A's desktop";
  EXPECT_FALSE(model::access_check(blocks.a, desktop_of(blocks.plan_a), access::kWriteDac))
      << "nor can A reopen its own to others";
  EXPECT_TRUE(model::access_check(blocks.user, desktop_of(blocks.plan_a), use | access::kWriteDac))
      << "the user (the monitor that makes it) can";
  EXPECT_NE(blocks.plan_a.desktop.name, blocks.plan_b.desktop.name);
}

}  // namespace
}  // namespace stackie
