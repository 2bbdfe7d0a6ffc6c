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
  policy.host_names = {"db", "cache"};
  policy.link_free_roots = {"/home/u/src"};
  policy.no_create = {"/home/u/src/.env"};
  policy.limits = {512ull << 20, 100, 1500, 8ull << 20, true};
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
  EXPECT_FALSE(policy_from_json(R"({"v":1,"limits":{"pids":-1}})").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":1,"limits":{"memory":1.5}})").ok());
  EXPECT_FALSE(policy_from_json(R"({"v":1,"limits":{"pids":2}})").ok());  // below the minimum
  EXPECT_FALSE(policy_from_json(R"({"v":1,"limits":[]})").ok());
}

TEST(PolicyJson, NoLimitsFieldMeansNoLimits) {
  Result<SandboxPolicy> policy = policy_from_json(R"({"v":1})");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->limits, ResourceLimits{});
}

TEST(ByteSize, ParsesBinaryAndDecimalUnits) {
  struct Case {
    const char* text;
    uint64_t bytes;
  } cases[] = {{"512MiB", 512ull << 20}, {"2GiB", 2ull << 30},      {"1.5G", 3ull << 29},
               {"64M", 64ull << 20},     {"100MB", 100000000},      {"1048576", 1048576},
               {"4096B", 4096},          {"512 MiB", 512ull << 20}, {"0.5KiB", 512},
               {"1TiB", 1ull << 40},     {"1.001GB", 1001000000}};
  for (const auto& c : cases) {
    Result<uint64_t> bytes = parse_byte_size(c.text);
    ASSERT_TRUE(bytes.ok()) << c.text << ": " << bytes.error().message;
    EXPECT_EQ(*bytes, c.bytes) << c.text;
  }
}

TEST(ByteSize, RefusesWhatIsNotASize) {
  for (const char* text : {"lots", "", "MiB", "-1M", "1.M", "1.5", "12 parsecs", "1e9", "1MiBs",
                           "99999999999TiB", ".5G", "1..5G"}) {
    Result<uint64_t> bytes = parse_byte_size(text);
    EXPECT_FALSE(bytes.ok()) << "'" << text << "' parsed as " << (bytes.ok() ? *bytes : 0);
  }
  EXPECT_NE(parse_byte_size("lots").error().message.find("'lots' is not a size"),
            std::string::npos);
}

TEST(CpuMillis, ParsesWholeAndFractionalCpus) {
  EXPECT_EQ(*parse_cpu_millis("1.5"), 1500);
  EXPECT_EQ(*parse_cpu_millis("2"), 2000);
  EXPECT_EQ(*parse_cpu_millis("0.25"), 250);
  EXPECT_EQ(*parse_cpu_millis("1.001"), 1001);
  EXPECT_EQ(*parse_cpu_millis("0.5000"), 500);
  for (const char* text : {"0", "0.0001", "fast", "1.5x", "-1", "", "1001"})
    EXPECT_FALSE(parse_cpu_millis(text).ok()) << text;
}

TEST(LimitsFormat, ReadsBackAsWritten) {
  EXPECT_EQ(format_byte_size(512ull << 20), "512MiB");
  EXPECT_EQ(format_byte_size(2ull << 30), "2GiB");
  EXPECT_EQ(format_byte_size(3ull << 29), "1536MiB");  // exact, reads back as the same size
  EXPECT_EQ(format_byte_size((1ull << 30) + 1), "1.0GiB");
  EXPECT_EQ(format_byte_size(0), "unlimited");
  EXPECT_EQ(format_byte_size(100), "100B");
  EXPECT_EQ(format_cpu_millis(1500), "1.5");
  EXPECT_EQ(format_cpu_millis(2000), "2");
  EXPECT_EQ(format_cpu_millis(250), "0.25");
  EXPECT_EQ(format_cpu_millis(0), "unlimited");
}

TEST(LimitsDefaults, ShmIsTheSmallerOfMemoryAnd64MiB) {
  EXPECT_EQ(default_shm_bytes(0), 64ull << 20);
  EXPECT_EQ(default_shm_bytes(32ull << 20), 32ull << 20);
  EXPECT_EQ(default_shm_bytes(2ull << 30), 64ull << 20);
  ResourceLimits limits = default_limits();
  EXPECT_EQ(limits.memory_bytes, kDefaultMemoryBytes);
  EXPECT_EQ(limits.pids, kDefaultPids);
  EXPECT_EQ(limits.cpu_millis, 0);
  EXPECT_TRUE(check_limits(limits).ok());
}

TEST(PolicyValidate, RefusesRelativeAndDotPaths) {
  for (const char* bad : {"usr", "/usr/../etc", "/usr/./lib", "//usr", "/usr/", "", "C:/a/../b",
                          "C:/data\\..\\..\\Windows", "C:\\Users", "1:/x"}) {
    SandboxPolicy policy;
    policy.read_only = {{bad, ""}};
    EXPECT_FALSE(validate(policy).ok()) << bad;
  }
  for (const char* good : {"/", "C:/", "c:/Program Files/PostgreSQL"}) {
    SandboxPolicy policy;
    policy.read_only = {{good, ""}};
    EXPECT_TRUE(validate(policy).ok()) << good;
  }
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

  // A host name is one word of the sandbox's /etc/hosts: a newline or a space would add lines
  // or aliases of its own choosing.
  for (const char* bad : {"db\n10.0.0.1 evil", "db evil", "", "-db", "DB", "db/x"}) {
    SandboxPolicy hosts;
    hosts.host_names = {bad};
    EXPECT_FALSE(validate(hosts).ok()) << bad;
  }
  SandboxPolicy hosts;
  hosts.host_names = {"db", "stackie.redis", "my_cache-2"};
  EXPECT_TRUE(validate(hosts).ok());
  EXPECT_EQ(hosts_file_text(hosts),
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            "127.0.0.1\tdb\n127.0.0.1\tstackie.redis\n127.0.0.1\tmy_cache-2\n");
}

}  // namespace
}  // namespace stackie
