// The restricted-token planner: SID derivation and the shape of the plan (DESIGN.md §5b).
// What the plan *grants* is proven separately against the access-check model
// (token_access_model_test.cc).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "base/sha256.h"
#include "sandbox/restricted_token_plan.h"

namespace stackie {
namespace {

std::string hex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

// Reference digests: FIPS 180-4 examples and Python's hashlib for the padding boundaries
// (55/56/63/64 bytes are where the length field moves into a second block).
TEST(TokenSha256, MatchesReferenceDigests) {
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(55, 'a'))),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(hex(sha256(std::string(56, 'a'))),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(hex(sha256(std::string(63, 'a'))),
            "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(hex(sha256(std::string(64, 'a'))),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Pinned values (computed independently with Python: SHA-256("stackie:" + name), eight
// little-endian words). If these change, every ACL a daemon wrote before no longer matches.
TEST(TokenBlockSid, IsStableAcrossBuilds) {
  EXPECT_EQ(block_sid_for("demo-a"),
            "S-1-9-502331620-1865940481-3027517951-3111294180-958802653-4291900810-1740892563-"
            "2742474411");
  EXPECT_EQ(block_sid_for("demo-b"),
            "S-1-9-3143178487-4077699534-3735170788-1576935887-3355998440-4081842123-3716067622-"
            "1428833678");
  EXPECT_EQ(block_sid_for("demo-a"), block_sid_for("demo-a"));
}

TEST(TokenBlockSid, IsWellFormedAndDistinctPerName) {
  const std::regex shape("S-1-9(-[0-9]{1,10}){8}");
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    const std::string sid =
        block_sid_for("stack" + std::to_string(i % 40) + "-block" + std::to_string(i / 40));
    EXPECT_TRUE(std::regex_match(sid, shape)) << sid;
    seen.insert(sid);
  }
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_NE(block_sid_for("a-b"), block_sid_for("a-B"));
  EXPECT_NE(block_sid_for("ab"), block_sid_for("ab "));
}

SandboxPolicy policy_a() {
  SandboxPolicy policy;
  policy.name = "demo-a";
  policy.read_only = {{"C:\\Program Files\\PostgreSQL\\15", ""}};
  policy.read_write = {{"C:\\Users\\dev\\.stackie\\storage\\volumes\\demo\\a-data", ""}};
  policy.host_tmp_dir = "C:\\Users\\dev\\.stackie\\storage\\tmp\\demo-a";
  policy.storage_root = "C:\\Users\\dev\\.stackie\\storage";
  policy.environment = {{"PGDATA", "C:\\data"}, {"Temp", "C:\\Windows\\Temp"}, {"TMP", "x"}};
  return policy;
}

TEST(TokenPlan, RestrictsToBlockSidAndAllApplicationPackagesButNeverSystem) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy_a());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->block_sid, block_sid_for("demo-a"));
  EXPECT_EQ(plan->restricting_sids,
            (std::vector<Principal>{Principal::of(plan->block_sid),
                                    Principal::of(std::string(kSidAllApplicationPackages))}));
  EXPECT_EQ(plan->deny_only, std::vector<Principal>{Principal::user()});
  EXPECT_EQ(plan->privileges_kept, std::vector<std::string>{"SeChangeNotifyPrivilege"});
  for (const Principal& who : plan->restricting_sids) EXPECT_NE(who.sid, kSidLocalSystem);
}

TEST(TokenPlan, WritablePathsGetProtectedDaclWithoutUsers) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy_a());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->path_acls.size(), 3u);  // ro install dir, rw data, tmp
  int writable = 0;
  for (const PathAcl& acl : plan->path_acls) {
    for (const AclEntry& entry : acl.entries) {
      EXPECT_NE(entry.who.sid, kSidBuiltinUsers) << acl.path;
      EXPECT_NE(entry.who.sid, kSidAllApplicationPackages) << acl.path;
      if (entry.type == AclEntry::Type::deny) {
        EXPECT_FALSE(acl.writable) << "only read-only grants deny (writing)";
      }
      EXPECT_EQ(entry.inheritance, kObjectInherit | kContainerInherit);
      const bool reaches_block =
          entry.who == Principal::logon_session() || entry.who == Principal::of(plan->block_sid);
      if (reaches_block && entry.type == AclEntry::Type::allow) {
        EXPECT_EQ(entry.mask & (access::kWriteDac | access::kWriteOwner), 0u)
            << "the ACEs that let the block in never let it change the ACL";
      }
    }
    if (!acl.writable) {
      EXPECT_FALSE(acl.is_protected) << "read-only grants merge into the existing DACL";
      continue;
    }
    ++writable;
    EXPECT_TRUE(acl.is_protected) << acl.path;
    std::set<std::string> principals;
    for (const AclEntry& entry : acl.entries)
      principals.insert(entry.who.kind == Principal::Kind::literal ? entry.who.sid
                        : entry.who.kind == Principal::Kind::user  ? "<user>"
                                                                   : "<logon>");
    EXPECT_EQ(principals, (std::set<std::string>{"<user>", "<logon>", plan->block_sid,
                                                 std::string(kSidLocalSystem)}));
  }
  EXPECT_EQ(writable, 2);
}

// Outside storage (the project directory), a writable grant merges into the user's DACL and is
// revoked at the end; storage paths are not revoked (issue 18).
TEST(TokenPlan, OnlyStackiesOwnDirectoriesGetTheirDaclReplaced) {
  SandboxPolicy policy = policy_a();
  policy.read_write.push_back({"C:\\Users\\Dev\\src\\api", ""});
  policy.read_write.push_back({"c:/users/dev/.STACKIE/storage/volumes/demo/b", ""});
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy);
  ASSERT_TRUE(plan.ok());
  std::vector<std::string> revoked;
  for (const AclRevocation& revocation : plan_acl_revocations(*plan)) {
    revoked.push_back(revocation.path);
    EXPECT_EQ(revocation.sid, plan->block_sid);
  }
  EXPECT_EQ(revoked, (std::vector<std::string>{"C:\\Program Files\\PostgreSQL\\15",
                                               "C:\\Users\\Dev\\src\\api"}));
  for (const PathAcl& acl : plan->path_acls) {
    if (acl.path != "C:\\Users\\Dev\\src\\api") continue;
    EXPECT_TRUE(acl.writable);
    EXPECT_FALSE(acl.is_protected);
    EXPECT_EQ(acl.entries.size(), 2u) << "the logon SID and the block SID, nothing replaced";
  }
}

// A read-only grant denies the block writing first, so a read-only path below a writable one
// (the stack file in the project directory) stays read-only.
TEST(TokenPlan, ReadOnlyGrantsDenyWritingFirst) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy_a());
  ASSERT_TRUE(plan.ok());
  for (const PathAcl& acl : plan->path_acls) {
    if (acl.writable) continue;
    ASSERT_FALSE(acl.entries.empty());
    EXPECT_EQ(acl.entries.front().type, AclEntry::Type::deny);
    EXPECT_EQ(acl.entries.front().who, Principal::of(plan->block_sid));
    EXPECT_NE(acl.entries.front().mask & access::kFileWriteData, 0u);
    EXPECT_EQ(acl.entries.front().mask & access::kFileReadData, 0u);
  }
}

TEST(TokenPlan, PathGrantedTwiceIsPlannedOnceWritable) {
  // A path both read-only and read-write is planned once, writable.
  SandboxPolicy policy = policy_a();
  policy.read_only.push_back({policy.read_write[0].source, "C:\\elsewhere"});
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy);
  ASSERT_TRUE(plan.ok());
  int matches = 0;
  for (const PathAcl& acl : plan->path_acls)
    if (acl.path == policy.read_write[0].source) {
      ++matches;
      EXPECT_TRUE(acl.writable);
    }
  EXPECT_EQ(matches, 1);
}

TEST(TokenPlan, TempAndTmpPointIntoTheBlockStorage) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy_a());
  ASSERT_TRUE(plan.ok());
  const auto& env = plan->environment;
  ASSERT_EQ(env.size(), 3u) << "the caller's Temp/TMP are replaced, not duplicated";
  EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"PGDATA", "C:\\data"}));
  EXPECT_EQ(env[1].first, "TEMP");
  EXPECT_EQ(env[1].second, policy_a().host_tmp_dir);
  EXPECT_EQ(env[2].first, "TMP");
  EXPECT_EQ(env[2].second, policy_a().host_tmp_dir);
  EXPECT_EQ(plan->working_dir, policy_a().host_tmp_dir);
}

TEST(TokenPlan, InheritsStdioOnlyAndKillsOnJobClose) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy_a());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->inherited_handles,
            (std::vector<StdHandle>{StdHandle::input, StdHandle::output, StdHandle::error}));
  EXPECT_TRUE(plan->kill_on_job_close);
  EXPECT_FALSE(plan->network_confined);
}

// The block's `limits:` reach its job; no limit stays no limit.
TEST(TokenPlan, JobCarriesTheBlocksLimits) {
  SandboxPolicy policy = policy_a();
  policy.limits.memory_bytes = 512ull << 20;
  policy.limits.pids = 64;
  policy.limits.cpu_millis = 1500;
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->job_limits, (JobLimits{512ull << 20, 64, 1500}));
  policy.limits = {};
  plan = plan_restricted_token(policy);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->job_limits, JobLimits{});
}

// CpuRate is the share of all the machine's CPUs in 1/100 of a percent.
TEST(TokenPlan, CpuRateIsTheShareOfAllCpus) {
  EXPECT_EQ(job_cpu_rate(1500, 4), 3750u);  // 1.5 of 4 CPUs: 37.5 %
  EXPECT_EQ(job_cpu_rate(500, 1), 5000u);
  EXPECT_EQ(job_cpu_rate(1, 64), 1u);    // never 0, which would mean no cap
  EXPECT_EQ(job_cpu_rate(4000, 4), 0u);  // all of them: no cap at all
  EXPECT_EQ(job_cpu_rate(9000, 4), 0u);
  EXPECT_EQ(job_cpu_rate(0, 4), 0u);
}

TEST(TokenPlan, DefaultDaclNamesTheBlockSid) {
  Result<RestrictedTokenPlan> plan = plan_restricted_token(policy_a());
  ASSERT_TRUE(plan.ok());
  bool block = false;
  for (const AclEntry& entry : plan->default_dacl) {
    EXPECT_NE(entry.who.sid, kSidBuiltinUsers);
    block |= entry.who == Principal::of(plan->block_sid);
  }
  EXPECT_TRUE(block);
}

TEST(TokenPlan, RefusesWhatWindowsCannotHonour) {
  SandboxPolicy no_tmp = policy_a();
  no_tmp.host_tmp_dir.clear();
  Result<RestrictedTokenPlan> a = plan_restricted_token(no_tmp);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("host_tmp_dir"), std::string::npos);

  SandboxPolicy extra_fds = policy_a();
  extra_fds.pass_fds = {3};
  Result<RestrictedTokenPlan> b = plan_restricted_token(extra_fds);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("handles"), std::string::npos);

  SandboxPolicy unnamed = policy_a();
  unnamed.name.clear();
  EXPECT_FALSE(plan_restricted_token(unnamed).ok());
}

TEST(TokenPlan, IsDeterministic) {
  Result<RestrictedTokenPlan> first = plan_restricted_token(policy_a());
  Result<RestrictedTokenPlan> second = plan_restricted_token(policy_a());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->path_acls, second->path_acls);
  EXPECT_EQ(first->default_dacl, second->default_dacl);
  EXPECT_EQ(first->environment, second->environment);
}

// Each case is how CommandLineToArgvW / the MSVC runtime splits the line back into argv.
TEST(TokenCommandLine, QuotesTheWayWindowsSplits) {
  EXPECT_EQ(windows_command_line({"C:\\pg\\postgres.exe", "-D", "C:\\data"}),
            "C:\\pg\\postgres.exe -D C:\\data");
  EXPECT_EQ(windows_command_line({"C:\\Program Files\\x.exe", ""}),
            "\"C:\\Program Files\\x.exe\" \"\"");
  EXPECT_EQ(windows_command_line({"a\"b"}), "\"a\\\"b\"");
  EXPECT_EQ(windows_command_line({"dir with\\"}), "\"dir with\\\\\"")
      << "trailing backslashes double before the closing quote";
  EXPECT_EQ(windows_command_line({"x\\\"y z"}), "\"x\\\\\\\"y z\"")
      << "a backslash before a quote doubles, plus one for the quote";
  EXPECT_EQ(windows_command_line({"a\\b c"}), "\"a\\b c\"") << "lone backslashes stay";
}

TEST(TokenPlan, TheDesktopIsTheBlocksOwnAndNamedFromIt) {
  SandboxPolicy policy;
  policy.name = "shop-web";
  policy.host_tmp_dir = "C:/stackie/tmp/shop-web";
  auto plan = plan_restricted_token(policy);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->desktop.name.size(), 24u);
  EXPECT_EQ(plan->desktop.name.rfind("stackie-", 0), 0u);
  EXPECT_EQ(plan->desktop.name.find_first_of("\\/"), std::string::npos);
  auto again = plan_restricted_token(policy);
  EXPECT_EQ(again->desktop, plan->desktop) << "the same block, the same desktop";
  policy.name = "shop-db";
  EXPECT_NE(plan_restricted_token(policy)->desktop.name, plan->desktop.name);
  for (const auto& entry : plan->desktop.entries)
    EXPECT_EQ(entry.mask & 0x0100u, 0u) << "no DESKTOP_SWITCHDESKTOP for anyone";
}

}  // namespace
}  // namespace stackie
