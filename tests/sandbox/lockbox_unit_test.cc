// Pure parts of the lockbox: option parsing, the error line, the user-namespace diagnosis.
#include <cerrno>
#include <cstdlib>

#include <gtest/gtest.h>

#include "policy/resource_limits.h"
#include "sandbox/linux_namespaces.h"
#include "sandbox/lockbox_options.h"
#include "sandbox/setup_error.h"

namespace stackie {
namespace {

Result<lockbox::Options> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "stackie-lockbox");
  return lockbox::parse_options(static_cast<int>(args.size()), args.data());
}

// The kernel takes a hostname of at most 64 bytes, and --join checks a sandbox by it: a longer
// id still gets one, and two long ids that begin alike get two.
TEST(SandboxHostname, FitsTheKernelAndTellsLongIdsApart) {
  using linux_sandbox::sandbox_hostname;
  EXPECT_EQ(sandbox_hostname(""), "stackie");
  EXPECT_EQ(sandbox_hostname("web--api-db"), "web--api-db");
  const std::string at_limit(64, 'a');
  EXPECT_EQ(sandbox_hostname(at_limit), at_limit);
  const std::string one = std::string(70, 'a') + "-one", two = std::string(70, 'a') + "-two";
  EXPECT_EQ(sandbox_hostname(one).size(), 64u);
  EXPECT_EQ(sandbox_hostname(one).substr(0, 47), one.substr(0, 47));
  EXPECT_NE(sandbox_hostname(one), sandbox_hostname(two));
  EXPECT_EQ(sandbox_hostname(one), sandbox_hostname(one));
}

TEST(LockboxOptions, FlagsBuildThePolicy) {
  auto options =
      parse({"--ro", "/a:/b",    "--rw", "/c", "--tmpfs", "/t", "--net",  "localhost", "--identity",
             "user", "--setenv", "K",    "v",  "--chdir", "/b", "--name", "demo",      "--pass-fd",
             "5",    "--tmpdir", "/h",   "--", "prog",    "arg"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  const SandboxPolicy& p = options->policy;
  EXPECT_EQ(p.read_only, (std::vector<BindMount>{{"/a", "/b"}}));
  EXPECT_EQ(p.read_write, (std::vector<BindMount>{{"/c", ""}}));
  EXPECT_EQ(p.tmpfs, std::vector<std::string>{"/t"});
  EXPECT_EQ(p.network, NetworkMode::localhost);
  EXPECT_EQ(p.identity, Identity::user);
  EXPECT_EQ(p.environment.size(), 1u);
  EXPECT_EQ(p.working_dir, "/b");
  EXPECT_EQ(p.name, "demo");
  EXPECT_EQ(p.pass_fds, std::vector<int>{5});
  EXPECT_EQ(p.host_tmp_dir, "/h");
  EXPECT_EQ(options->command, (std::vector<std::string>{"prog", "arg"}));
}

// --exit-with (Windows `exec`): a pid, never with --join (which enters the block itself).
TEST(LockboxOptions, ExitWithTakesAPidAndNotJoin) {
  auto options = parse({"--exit-with", "4242", "--", "prog"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->exit_with_pid, 4242);
  EXPECT_FALSE(parse({"--exit-with", "0", "--", "prog"}).ok());
  EXPECT_FALSE(parse({"--exit-with", "x", "--", "prog"}).ok());
  auto both = parse({"--join", "7", "--exit-with", "8", "--", "prog"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("--exit-with"), std::string::npos) << both.error().message;
}

// --stop-fd (the Windows daemon's stop requests): an fd of its own, never with --join.
TEST(LockboxOptions, StopFdIsAnFdOfItsOwn) {
  auto options = parse({"--stop-fd", "5", "--", "prog"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->stop_fd, 5);
  EXPECT_FALSE(parse({"--stop-fd", "x", "--", "prog"}).ok());
  auto same = parse({"--policy-fd", "3", "--stop-fd", "3", "--", "prog"});
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.error().message.find("--stop-fd"), std::string::npos) << same.error().message;
  EXPECT_FALSE(parse({"--join", "7", "--stop-fd", "5", "--", "prog"}).ok());
}

// --cpus (the Windows `exec`): the block's CPU limit in CPUs, kept as millis.
TEST(LockboxOptions, CpusTakesADecimalNumberOfCpus) {
  auto options = parse({"--cpus", "1.5", "--", "prog"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->cpus_given);
  EXPECT_EQ(options->policy.limits.cpu_millis, 1500);
  auto bad = parse({"--cpus", "lots", "--", "prog"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--cpus"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(parse({"--", "prog"})->cpus_given);
  // The daemon writes the block's limit with format_cpu_millis (join_argv on Windows).
  for (int millis : {250, 1000, 1500, 3000}) {
    const std::string text = format_cpu_millis(millis);
    auto round_trip = parse({"--cpus", text.c_str(), "--", "prog"});
    ASSERT_TRUE(round_trip.ok()) << text << ": " << round_trip.error().message;
    EXPECT_EQ(round_trip->policy.limits.cpu_millis, millis) << text;
  }
}

TEST(LockboxOptions, CommandArgumentsAfterSeparatorAreNotOptions) {
  auto options = parse({"--", "prog", "--ro", "x"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->command.size(), 3u);
  EXPECT_TRUE(options->policy.read_only.empty());
}

TEST(LockboxOptions, JoinTakesOnlyEnvironmentAndDirectory) {
  EXPECT_TRUE(parse({"--join", "42", "--setenv", "A", "b", "--", "x"}).ok());
  EXPECT_FALSE(parse({"--join", "42", "--tmpfs", "/x", "--", "x"}).ok());
}

TEST(LockboxOptions, PassEnvTakesTheValueFromTheEnvironmentNotTheCommandLine) {
  ::setenv("STACKIE_TEST_PASSED", "s3cret value", 1);
  ::unsetenv("STACKIE_TEST_UNSET");
  auto options = parse({"--join", "42", "--pass-env", "STACKIE_TEST_PASSED", "--pass-env",
                        "STACKIE_TEST_UNSET", "--", "x"});
  ::unsetenv("STACKIE_TEST_PASSED");
  ASSERT_TRUE(options.ok()) << options.error().message;
  // An unset name passes nothing (not an empty value).
  EXPECT_EQ(
      options->policy.environment,
      (std::vector<std::pair<std::string, std::string>>{{"STACKIE_TEST_PASSED", "s3cret value"}}));
  EXPECT_FALSE(parse({"--pass-env"}).ok());
}

TEST(LockboxSetupError, OneEscapedJsonLine) {
  auto line = setup_error_json({"mount /a\"b", 13, "line\nbreak\x01"});
  EXPECT_EQ(line,
            "{\"step\":\"mount /a\\\"b\",\"errno\":13,\"message\":\"line\\nbreak\\u0001\"}\n");
}

}  // namespace
}  // namespace stackie
