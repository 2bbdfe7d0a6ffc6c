// Which blocks a load builds (`stackie up BLOCK...`, `--profile`, the blocks already up) and
// how env files merge under `environment` (stack/loader.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stack/loader.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::TempDir;

LoadOptions options_for(const TempDir& home, const std::string& stack_text) {
  LoadOptions options;
  options.cwd = home.path();
  options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "stackie"}, {"PATH", "/bin"}};
  options.block_path = {home / "no-catalog"};
  options.os = "linux";
  options.file = home.write("stackie-stack.yml", stack_text);
  return options;
}

std::vector<std::string> names(const ResolvedStack& stack) {
  std::vector<std::string> out;
  for (const auto& block : stack.blocks) out.push_back(block.name);
  return out;
}

using Names = std::vector<std::string>;

// db <- api <- web; debug (profile debug) depends on db; tools (profiles tools, debug).
constexpr const char* kStack =
    "demo:\n  blocks:\n"
    "    db: {command: [sh]}\n"
    "    api: {command: [sh], depends_on: [db]}\n"
    "    web: {command: [sh], depends_on: [api]}\n"
    "    debug: {command: [sh], depends_on: [db], profiles: [debug]}\n"
    "    tools: {command: [sh], profiles: [tools, debug]}\n";

TEST(Selection, BlocksWithoutProfilesStartAndProfilesAddTheirs) {
  TempDir home;
  LoadOptions options = options_for(home, kStack);
  auto all = load_stack(options);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(names(*all), (Names{"db", "api", "web"}));
  EXPECT_TRUE(all->default_selection);
  ASSERT_EQ(all->skipped.size(), 2u);
  EXPECT_EQ(all->skipped[0].first, "debug");
  EXPECT_EQ(all->skipped[1].second, (Names{"tools", "debug"}));

  options.profiles = {"debug"};
  auto debug = load_stack(options);
  ASSERT_TRUE(debug.ok()) << debug.error().message;
  EXPECT_EQ(names(*debug), (Names{"db", "api", "web", "debug", "tools"}));
  EXPECT_EQ(debug->blocks[3].profiles, (Names{"debug"}));
  EXPECT_TRUE(debug->default_selection);
}

TEST(Selection, NamedBlocksStartWithWhatTheyDependOnWhateverTheirProfiles) {
  TempDir home;
  LoadOptions options = options_for(home, kStack);
  options.blocks = {"api"};
  auto api = load_stack(options);
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_EQ(names(*api), (Names{"db", "api"}));
  EXPECT_FALSE(api->default_selection);
  options.blocks = {"debug"};
  EXPECT_EQ(names(*load_stack(options)), (Names{"db", "debug"}))
      << "a block named explicitly starts though its profile is not active";
}

TEST(Selection, TheBlocksAlreadyUpStayInTheStack) {
  TempDir home;
  LoadOptions options = options_for(home, kStack);
  options.blocks = {"tools"};
  std::string asked;
  options.running_blocks = [&](const std::string& stack) {
    asked = stack;
    return Names{"api", "db", "removed-from-the-file"};
  };
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(asked, "demo");
  EXPECT_EQ(names(*stack), (Names{"db", "api", "tools"}));

  options.blocks = {};
  options.running_blocks = [](const std::string&) { return Names{"db", "api", "web"}; };
  auto same = load_stack(options);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->default_selection) << "the running blocks are the default set";
}

TEST(Selection, AnUnknownBlockOrProfileIsAnErrorNamingWhatThereIs) {
  TempDir home;
  LoadOptions options = options_for(home, kStack);
  options.blocks = {"apx"};
  auto block = load_stack(options);
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.error().message,
            options.file +
                ": stack 'demo' has no block 'apx' (its blocks: db, api, web, debug, tools); "
                "did you mean 'api'?");
  options.blocks = {};
  options.profiles = {"debu"};
  auto profile = load_stack(options);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().message,
            options.file +
                ": no block of stack 'demo' has the profile 'debu' (its profiles: debug, tools); "
                "did you mean 'debug'?");
}

TEST(Selection, ProfilesAreCheckedWhereTheyAreWritten) {
  TempDir home;
  LoadOptions options =
      options_for(home, "demo:\n  blocks:\n    a: {command: [sh], profiles: [ok, -bad]}\n");
  auto stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message,
            options.file +
                ":3:39: invalid profile name '-bad' (letters, digits, '_', '.', '-'; not first)");
  options = options_for(home, "demo:\n  blocks:\n    a: {command: [sh], profiles: [x]}\n");
  auto none = load_stack(options);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            options.file +
                ": no block of stack 'demo' to start: each has profiles (x) and none is active; "
                "use --profile NAME or name the blocks");
}

std::string env_of(const ResolvedBlock& block, const std::string& name, std::string* source) {
  for (size_t i = 0; i < block.policy.environment.size(); ++i)
    if (block.policy.environment[i].first == name) {
      if (source) *source = block.environment_sources.at(i);
      return block.policy.environment[i].second;
    }
  return "<unset>";
}

TEST(EnvFiles, MergedInOrderUnderEnvironmentWithTheirSources) {
  TempDir home;
  home.write("base.env", "# shared\nA=base\nB=base\nexport C='literal ${vars.x} $HOME'\n");
  home.write("conf/local.env", "B=local\nD=\"line\\nbreak\"\n");
  LoadOptions options = options_for(home,
                                    "demo:\n  blocks:\n    a:\n      command: [sh]\n"
                                    "      env_file: [base.env, conf/local.env,\n"
                                    "                 {path: missing.env, required: false}]\n"
                                    "      environment: {A: from-stack}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock& block = stack->blocks[0];
  std::string source;
  EXPECT_EQ(env_of(block, "A", &source), "from-stack");
  EXPECT_EQ(source, "stackie-stack.yml:7:24");
  EXPECT_EQ(env_of(block, "B", &source), "local");
  EXPECT_EQ(source, "conf/local.env:1:1");
  EXPECT_EQ(env_of(block, "C", &source), "literal ${vars.x} $HOME") << "env files interpolate "
                                                                       "nothing";
  EXPECT_EQ(source, "base.env:4:8");
  EXPECT_EQ(env_of(block, "D", nullptr), "line\nbreak");
  EXPECT_EQ(env_of(block, "PATH", &source), "/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(source, "default");
  EXPECT_EQ(block.env_files, (Names{home / "base.env", home / "conf/local.env"}));
}

TEST(EnvFiles, ASingleFileAndItsErrorsWithPositions) {
  TempDir home;
  home.write("bad.env", "OK=1\nNOT OK\n");
  LoadOptions options =
      options_for(home, "demo:\n  blocks:\n    a: {command: [sh], env_file: bad.env}\n");
  auto bad = load_stack(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, home / "bad.env" +
                                     ":2:5: unexpected 'O' in the name 'NOT' "
                                     "(expected NAME=VALUE)");
  options = options_for(home, "demo:\n  blocks:\n    a: {command: [sh], env_file: gone.env}\n");
  auto missing = load_stack(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(
      missing.error().message.rfind(
          options.file + ":3:34: env_file of block 'a': " + home / "gone.env" + ": cannot read", 0),
      0u)
      << missing.error().message;
  options = options_for(home, "demo:\n  blocks:\n    a: {command: [sh], env_file: {x: 1}}\n");
  auto shape = load_stack(options);
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.error().message, options.file +
                                       ":3:34: 'env_file' must be a file name or a "
                                       "list of them, got a map");
}

TEST(EnvFiles, OnlyTheStartedBlocksReadTheirs) {
  TempDir home;
  LoadOptions options =
      options_for(home,
                  "demo:\n  blocks:\n    a: {command: [sh]}\n"
                  "    b: {command: [sh], profiles: [extra], env_file: not-there.env}\n");
  EXPECT_TRUE(load_stack(options).ok()) << "a block left out does not need its env file";
}

// Issue 14's rule for the files that decide the next `up`: a block whose project directory
// holds its env file sees it read-only, so it cannot rewrite what it (or another block) runs
// with next time.
TEST(EnvFiles, AFirstPartyBlockSeesItsEnvFileReadOnly) {
  TempDir home;
  home.write("app/app.env", "A=1\n");
  home.write("app/serve.sh", "#!/bin/sh\n", true);
  LoadOptions options = options_for(
      home, "demo:\n  blocks:\n    a: {path: app, command: ./serve.sh, env_file: app/app.env}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  bool read_only = false;
  for (const auto& bind : stack->blocks[0].policy.read_only)
    read_only = read_only || bind.source == home / "app/app.env";
  EXPECT_TRUE(read_only);
}

}  // namespace
}  // namespace stackie
