// `stacks:` (issue 22): another stack file composed in, as it is or with overrides; relative to
// the including file; a hostile file (a cycle, a path out of the project by '..' or by a
// symbolic link) fails with one line at its position.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "resolved_lookup.h"
#include "stack/loader.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::env_value;
using testing::find_block;

using testing::TempDir;

struct Project {
  TempDir root;
  std::string dir = root / "project";
  LoadOptions options() const {
    LoadOptions options;
    options.cwd = dir;
    options.env = {{"HOME", root.path()}, {"STACKIE_HOME", root / "s"}, {"PATH", "/usr/bin:/bin"}};
    options.block_path = {testing::shipped_catalog()};
    options.shipped_block_path = options.block_path;
    options.os = "linux";
    return options;
  }
  void write(const std::string& relative, const std::string& text) const {
    root.write("project/" + relative, text);
  }
  std::string at(const std::string& relative, const std::string& position) const {
    return dir + "/" + relative + ":" + position;
  }
  std::string error() const {
    auto stack = load_stack(options());
    return stack.ok() ? std::string("loaded") : stack.error().message;
  }
};

TEST(Substacks, AsItIsTheBlocksJoinTheStackWithTheirOwnDirectory) {
  Project p;
  p.write("stackie-stack.yml",
          "shop:\n  stacks:\n    billing: {}\n  blocks:\n"
          "    web:\n      command: [sh]\n      consumes: {api: billing-api}\n");
  p.write("billing/stackie-stack.yml",
          "billing:\n  storage_root: /elsewhere\n  blocks:\n    billing-api:\n"
          "      path: .\n      command: [sh]\n      env_file: billing.env\n"
          "      serves: {http: 8100}\n      environment: {MODE: plain}\n");
  p.write("billing/billing.env", "FROM_FILE=1\n");
  auto stack = load_stack(p.options());
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->name, "shop");
  const ResolvedBlock* api = find_block(*stack, "billing-api");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->sandbox_id, "shop-billing-api");          // the including stack's
  EXPECT_EQ(api->policy.working_dir, p.dir + "/billing");  // relative to its own file
  EXPECT_EQ(env_value(*api, "FROM_FILE"), "1");
  EXPECT_EQ(stack->blocks.front().name, "billing-api");  // consumed: started first
  // The substack's own storage_root is not silently dropped.
  ASSERT_EQ(stack->warnings.size(), 1u);
  EXPECT_EQ(stack->warnings[0],
            p.at("billing/stackie-stack.yml",
                 "2:17: warning: a substack's storage_root is not used: the blocks of "
                 "'billing/stackie-stack.yml' keep their data in the storage of the stack that "
                 "includes it"));
  // The block's directory holds the substack file: shown read-only, like the stack file, so
  // the block cannot rewrite how the next `up` runs it.
  EXPECT_TRUE(std::any_of(
      api->policy.read_only.begin(), api->policy.read_only.end(),
      [&](const BindMount& b) { return b.source == p.dir + "/billing/stackie-stack.yml"; }));
}

TEST(Substacks, OverridesReplaceFieldsOfTheSubstacksBlocks) {
  Project p;
  p.write("stackie-stack.yml",
          "shop:\n  stacks:\n    ./billing/stackie-stack.yml:\n      blocks:\n"
          "        worker: {environment: {MODE: override}, restart: always}\n");
  p.write("billing/stackie-stack.yml",
          "billing:\n  blocks:\n    worker:\n      command: [sh]\n"
          "      environment: {MODE: plain, OTHER: x}\n");
  auto stack = load_stack(p.options());
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock& worker = stack->blocks[0];
  EXPECT_EQ(env_value(worker, "MODE"), "override");
  EXPECT_EQ(env_value(worker, "OTHER"), "<unset>");  // a field given is the whole field
  EXPECT_EQ(worker.restart, RestartPolicy::always);

  p.write("stackie-stack.yml",
          "shop:\n  stacks:\n    billing:\n      blocks:\n        wroker: {restart: always}\n");
  EXPECT_EQ(p.error(), p.at("stackie-stack.yml",
                            "5:9: substack 'billing/stackie-stack.yml' has no block 'wroker' to "
                            "override (its blocks: worker); did you mean 'worker'?"));
}

TEST(Substacks, ACycleIsNamedAtTheIncludeThatClosesIt) {
  Project p;
  p.write("stackie-stack.yml", "shop:\n  stacks: [a]\n  blocks:\n    web: {command: [sh]}\n");
  p.write("a/stackie-stack.yml", "a:\n  stacks: [../b]\n  blocks:\n    x: {command: [sh]}\n");
  p.write("b/stackie-stack.yml", "b:\n  stacks: [..]\n  blocks:\n    y: {command: [sh]}\n");
  EXPECT_EQ(p.error(), p.at("b/stackie-stack.yml",
                            "2:12: substack cycle: stackie-stack.yml -> a/stackie-stack.yml -> "
                            "b/stackie-stack.yml -> stackie-stack.yml"));
  p.write("stackie-stack.yml", "shop:\n  stacks: [.]\n  blocks:\n    web: {command: [sh]}\n");
  EXPECT_EQ(p.error(), p.at("stackie-stack.yml",
                            "2:12: substack cycle: stackie-stack.yml -> stackie-stack.yml"));
}

TEST(Substacks, MissingAndEscapingPathsFailCleanly) {
  Project p;
  p.write("stackie-stack.yml", "shop:\n  stacks: [billing]\n  blocks:\n    web: {command: [sh]}\n");
  EXPECT_EQ(p.error(), p.at("stackie-stack.yml",
                            "2:12: substack 'billing' not found (" + p.dir + "/billing)"));
  p.root.write("outside/stackie-stack.yml", "evil:\n  blocks:\n    x: {command: [sh]}\n");
  p.write("stackie-stack.yml",
          "shop:\n  stacks: [../outside]\n  blocks:\n    web: {command: [sh]}\n");
  EXPECT_EQ(p.error(), p.at("stackie-stack.yml",
                            "2:12: substack '../outside' is outside the "
                            "project directory " +
                                p.dir + " (" + p.root / "outside" + ")"));
  // A link inside the project to a file outside it: refused, naming where it leads.
  ASSERT_EQ(::symlink((p.root / "outside").c_str(), (p.dir + "/linked").c_str()), 0);
  p.write("stackie-stack.yml", "shop:\n  stacks: [linked]\n  blocks:\n    web: {command: [sh]}\n");
  EXPECT_EQ(p.error(),
            p.at("stackie-stack.yml", "2:12: substack 'linked' goes through a symbolic link (" +
                                          p.dir + "/linked is " + p.root / "outside" +
                                          "); a substack must be a plain file inside the project"));
  p.write("empty/readme", "");
  p.write("stackie-stack.yml", "shop:\n  stacks: [empty]\n  blocks:\n    web: {command: [sh]}\n");
  EXPECT_EQ(p.error(),
            p.at("stackie-stack.yml",
                 "2:12: substack 'empty': no stack file in " + p.dir +
                     "/empty (looked for stackie-stack.yml, stackie-stack.yaml, stackie.yml, "
                     "stackie.yaml)"));
}

TEST(Substacks, ABlockInTwoFilesIsAnError) {
  Project p;
  p.write("stackie-stack.yml", "shop:\n  stacks: [b]\n  blocks:\n    web: {command: [sh]}\n");
  p.write("b/stackie-stack.yml", "b:\n  blocks:\n    web: {command: [sh]}\n");
  EXPECT_EQ(p.error(), p.at("b/stackie-stack.yml",
                            "3:5: block 'web' of substack 'b/stackie-stack.yml' is already in the "
                            "stack (" +
                                p.dir + "/stackie-stack.yml:4:5)"));
  // An error inside the substack is the substack's position.
  p.write("b/stackie-stack.yml", "b:\n  blocks:\n    other: {commnd: [sh]}\n");
  EXPECT_EQ(p.error(), p.at("b/stackie-stack.yml",
                            "3:13: unknown field 'commnd' in block 'other'; did you mean "
                            "'command'?"));
}

}  // namespace
}  // namespace stackie
