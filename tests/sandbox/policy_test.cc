#include "policy/policy.h"

#include <gtest/gtest.h>

namespace stackie {
namespace {

SandboxPolicy sample_policy() {
  SandboxPolicy policy;
  policy.name = "demo-postgres";
  policy.read_only = {{"/usr/lib/postgresql/15/bin", ""}};
  policy.read_write = {{"/home/u/.stackie/storage/volumes/demo/data", "/var/lib/postgresql"}};
  policy.tmpfs = {"/run/postgresql"};
  policy.network = NetworkMode::localhost;
  policy.identity = Identity::user;
  policy.environment = {{"PGDATA", "/var/lib/postgresql"}, {"QUOTE", "a \"b\"\n\\c"}};
  policy.working_dir = "/var/lib/postgresql";
  policy.host_tmp_dir = "/home/u/.stackie/storage/tmp/demo-postgres";
  policy.pass_fds = {3, 7};
  return policy;
}

TEST(PolicyJson, RoundTripKeepsEveryField) {
  SandboxPolicy policy = sample_policy();
  Result<SandboxPolicy> back = policy_from_json(policy_to_json(policy));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, policy);
}

TEST(PolicyJson, RejectsMalformedInput) {
  EXPECT_FALSE(policy_from_json("").ok());
  EXPECT_FALSE(policy_from_json("[]").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":2})").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":1,"read_only":"/usr"})").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":1,"network":"internet"})").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":1,"environment":[["A"]]})").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":1,"pass_fds":[1.5]})").ok());
}

TEST(PolicyValidate, RefusesRelativeAndDotPaths) {
  for (const char* bad : {"usr", "/usr/../etc", "/usr/./lib", "//usr", "/usr/", ""}) {
    SandboxPolicy policy;
    policy.read_only = {{bad, ""}};
    EXPECT_FALSE(validate(policy).ok()) << bad;
  }
  SandboxPolicy policy;
  policy.read_only = {{"/", ""}};
  EXPECT_TRUE(validate(policy).ok());
}

TEST(PolicyValidate, RefusesDuplicateDestinationsBadNamesAndLowFds) {
  SandboxPolicy twice;
  twice.read_only = {{"/usr", ""}};
  twice.read_write = {{"/srv", "/usr"}};
  EXPECT_FALSE(validate(twice).ok());

  SandboxPolicy name;
  name.name = "../etc";
  EXPECT_FALSE(validate(name).ok());

  SandboxPolicy fds;
  fds.pass_fds = {2};
  EXPECT_FALSE(validate(fds).ok());

  SandboxPolicy env;
  env.environment = {{"A=B", "c"}};
  EXPECT_FALSE(validate(env).ok());
}

}  // namespace
}  // namespace stackie
