// The older forms the docs showed (issue 22) load with the same meaning as the preferred ones:
// `run: {binary, args}`, `append_file: {path, content}`, upper-case var names.
#include <gtest/gtest.h>

#include <map>

#include "stack/block_def.h"
#include "stack/loader.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::TempDir;

Result<BlockDef> parse(const std::string& text) {
  STACKIE_TRY_ASSIGN(root, parse_yaml(text, "b.yml"));
  return parse_block_def(root, "b.yml", "acme.svc");
}

TEST(DocumentedForms, RunMapAndAppendContentMeanTheListAndText) {
  auto older = parse(R"(acme.svc:
  init:
    - run: {binary: svc, args: [--init, "${paths.data}"]}
    - run: {binary: svc}
    - append_file: {path: /x/conf, content: "x=1\n"}
  command: [svc]
)");
  auto preferred = parse(R"(acme.svc:
  init:
    - run: [svc, --init, "${paths.data}"]
    - run: [svc]
    - append_file: {path: /x/conf, text: "x=1\n"}
  command: [svc]
)");
  ASSERT_TRUE(older.ok()) << older.error().message;
  ASSERT_TRUE(preferred.ok()) << preferred.error().message;
  ASSERT_EQ(older->init.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(older->init[i].run.size(), preferred->init[i].run.size());
    for (size_t a = 0; a < older->init[i].run.size(); ++a)
      EXPECT_EQ(older->init[i].run[a].text, preferred->init[i].run[a].text);
  }
  EXPECT_EQ(older->init[2].append_text->text, "x=1\n");
  EXPECT_EQ(older->init[2].append_path->text, "/x/conf");
}

TEST(DocumentedForms, BadOlderFormsSayWhere) {
  auto no_binary = parse("acme.svc:\n  init:\n    - run: {args: [x]}\n  command: [svc]\n");
  ASSERT_FALSE(no_binary.ok());
  EXPECT_EQ(no_binary.error().message, "b.yml:3:12: 'run' in the map form needs 'binary'");
  auto both = parse(
      "acme.svc:\n  init:\n    - append_file: {path: /x, text: a, content: b}\n"
      "  command: [svc]\n");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().message,
            "b.yml:3:49: 'append_file' has both 'text' and 'content' (the same field)");
}

TEST(DocumentedForms, UpperCaseVarNamesSetTheDefinitionsVars) {
  TempDir home;
  TempDir host;
  for (const char* program : {"postgres", "initdb", "pg_isready"})
    host.program(std::string("usr/lib/postgresql/16/bin/") + program);
  home.write("stackie-stack.yml",
             "shop:\n  blocks:\n    stackie.postgres:\n"
             "      vars: {USER: app, DATABASE: shop, PASSWORD: pw}\n");
  LoadOptions options;
  options.cwd = home.path();
  options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "s"}, {"PATH", "/usr/bin:/bin"}};
  options.block_path = {testing::shipped_catalog()};
  options.shipped_block_path = options.block_path;
  options.os = "linux";
  options.program_root = host.path();
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  std::map<std::string, std::string> env(stack->blocks[0].policy.environment.begin(),
                                         stack->blocks[0].policy.environment.end());
  EXPECT_EQ(env["PGUSER"], "app");
  EXPECT_EQ(env["PGDATABASE"], "shop");
  EXPECT_EQ(env["POSTGRES_PASSWORD"], "pw");
}

TEST(DocumentedForms, AComposeStyleVolumeListIsTheProjects) {
  TempDir home;
  TempDir host;
  for (const char* program : {"postgres", "initdb", "pg_isready"})
    host.program(std::string("usr/lib/postgresql/16/bin/") + program);
  home.write("conf/app.ini", "x=1\n");
  home.write("stackie-stack.yml",
             "shop:\n  blocks:\n    stackie.postgres:\n"
             "      vars: {password: pw}\n"
             "      volumes:\n        - pgdata:/var/lib/postgresql/data\n"
             "    backup:\n      command: [sh]\n"
             "      volumes: [\"pgdata:/backup/data\", \"./conf:/etc/app:ro\"]\n");
  LoadOptions options;
  options.cwd = home.path();
  options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "s"}, {"PATH", "/usr/bin:/bin"}};
  options.block_path = {testing::shipped_catalog()};
  options.shipped_block_path = options.block_path;
  options.os = "linux";
  options.program_root = host.path();
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  std::string shared = home / "s/storage/volumes/shop/.shared/pgdata";
  std::map<std::string, std::string> env(stack->blocks[0].policy.environment.begin(),
                                         stack->blocks[0].policy.environment.end());
  EXPECT_EQ(env["PGDATA"], shared);  // replaces the definition's `data`
  const SandboxPolicy& backup = stack->blocks[1].policy;
  auto has = [](const std::vector<BindMount>& binds, const std::string& path) {
    for (const auto& bind : binds)
      if (bind.source == path) return true;
    return false;
  };
  EXPECT_TRUE(has(backup.read_write, shared));  // one volume for the project
  EXPECT_TRUE(has(backup.read_only, home / "conf"));
  EXPECT_FALSE(has(backup.read_write, home / "conf"));

  home.write("stackie-stack.yml",
             "shop:\n  blocks:\n    a:\n      command: [sh]\n"
             "      volumes: [\"data:/x:rx\"]\n");
  auto bad = load_stack(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            home / "stackie-stack.yml" + ":5:26: unknown volume option 'rx' (expected ro or rw)");
}

}  // namespace
}  // namespace stackie
