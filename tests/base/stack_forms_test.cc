// The stack file's forms of issue 22 that map onto what a block already is: `paths:` (a path
// shown inside the sandbox where the program expects it), `storage_root` as a name
// (config.toml's [storage_roots]), `tools:` (programs besides the command) and `sources:` (the
// project's own block definitions).
#include <gtest/gtest.h>

#include <algorithm>

#include "resolved_lookup.h"
#include "stack/loader.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::env_value;

using testing::TempDir;

struct Host {
  TempDir home;
  TempDir programs;  // a fake install tree (LoadOptions::program_root)
  Host() {
    for (const char* program : {"postgres", "initdb", "pg_isready"})
      programs.program(std::string("usr/lib/postgresql/16/bin/") + program);
  }
  LoadOptions options(const std::string& stack_text) const {
    home.write("stackie-stack.yml", stack_text);
    LoadOptions options;
    options.cwd = home.path();
    options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "s"}, {"PATH", "/usr/bin:/bin"}};
    options.block_path = {testing::shipped_catalog()};
    options.shipped_block_path = options.block_path;
    options.os = "linux";
    options.program_root = programs.path();
    return options;
  }
  std::string at(const std::string& position) const {
    return home / "stackie-stack.yml" + ":" + position;
  }
};

const BindMount* bind_at(const std::vector<BindMount>& binds, const std::string& target) {
  for (const auto& bind : binds)
    if (bind.target() == target) return &bind;
  return nullptr;
}

TEST(PathsInside, ADefinitionPathIsShownWhereTheProgramExpectsIt) {
  Host host;
  auto stack = load_stack(
      host.options("shop:\n  blocks:\n    stackie.postgres:\n      vars: {password: pw}\n"
                   "      paths: {data: /var/lib/postgresql/data}\n"));
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock& pg = stack->blocks[0];
  std::string volume = host.home / "s/storage/volumes/shop/postgres/data";
  // Inside, the data directory is the documented path; on the host it is the block's volume.
  EXPECT_EQ(env_value(pg, "PGDATA"), "/var/lib/postgresql/data");
  const BindMount* bind = bind_at(pg.policy.read_write, "/var/lib/postgresql/data");
  ASSERT_NE(bind, nullptr);
  EXPECT_EQ(bind->source, volume);
  EXPECT_EQ(bind_at(pg.policy.read_write, volume), nullptr) << "not shown at its host path too";
  EXPECT_EQ(pg.command[2], "/var/lib/postgresql/data");  // postgres -D ${paths.data}
  EXPECT_TRUE(validate(pg.policy).ok());
}

TEST(PathsInside, AFirstPartyBlockGetsAManagedVolumeThere) {
  Host host;
  auto stack = load_stack(host.options(
      "shop:\n  blocks:\n    app:\n      command: [sh, -c, 'echo hi > ${paths.uploads}/x']\n"
      "      paths: {uploads: /srv/uploads}\n"));
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const BindMount* bind = bind_at(stack->blocks[0].policy.read_write, "/srv/uploads");
  ASSERT_NE(bind, nullptr);
  EXPECT_EQ(bind->source, host.home / "s/storage/volumes/shop/app/uploads");
  EXPECT_EQ(stack->blocks[0].command[2], "echo hi > /srv/uploads/x");
}

TEST(PathsInside, WhereTheSandboxCannotShowItThePathStaysTheHostsWithAWarning) {
  Host host;
  LoadOptions options = host.options(
      "shop:\n  blocks:\n    app:\n      command: [sh]\n      paths: {uploads: /srv/uploads}\n");
  options.no_sandbox = true;
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(bind_at(stack->blocks[0].policy.read_write, "/srv/uploads"), nullptr);
  ASSERT_EQ(stack->warnings.size(), 1u);
  EXPECT_EQ(stack->warnings[0], host.at("5:24: warning: block 'app' runs unsandboxed, so it cannot "
                                        "see a directory at another path: ${paths.uploads} is its "
                                        "host path, not /srv/uploads"));
}

TEST(PathsInside, BadPathsSayWhere) {
  Host host;
  auto error_of = [&](const std::string& paths) {
    auto stack = load_stack(host.options(
        "shop:\n  blocks:\n    app:\n      command: [sh]\n      paths: " + paths + "\n"));
    return stack.ok() ? std::string("loaded") : stack.error().message;
  };
  EXPECT_EQ(error_of("{data: var/data}"),
            host.at("5:21: 'paths.data' must be an absolute path inside the sandbox, got "
                    "'var/data'"));
  EXPECT_EQ(error_of("{data: /srv/../etc/x}"),
            host.at("5:21: 'paths.data' must be a plain absolute path (no '.', '..' or '//'), "
                    "got '/srv/../etc/x'"));
  EXPECT_EQ(error_of("{data: /usr/local/data}"),
            host.at("5:21: 'paths.data' (/usr/local/data) is inside /usr, which the sandbox "
                    "provides itself"));
  EXPECT_EQ(error_of("{data: /etc}"),
            host.at("5:21: 'paths.data' (/etc) would hide /etc/ld.so.cache, which the sandbox "
                    "provides itself"));
  EXPECT_EQ(error_of("{data: /}"), host.at("5:21: 'paths.data' cannot be the sandbox's root"));
  EXPECT_EQ(error_of("{a: /srv/x, b: /srv/x}"),
            host.at("5:29: 'paths.b' and 'paths.a' are both shown at /srv/x"));
  // Nor over another directory the block is shown (here a host directory it binds).
  auto over_volume = load_stack(host.options(
      "shop:\n  blocks:\n    app:\n      command: [sh]\n      volumes: {x: /srv/data}\n"
      "      paths: {data: /srv/data}\n"));
  ASSERT_FALSE(over_volume.ok());
  EXPECT_EQ(over_volume.error().message,
            host.at("6:21: 'paths.data' (/srv/data) is already shown in the sandbox: the block's "
                    "own directory, a program's or another path's"));
}

TEST(StorageRootName, ANameIsWhereConfigTomlSaysItIs) {
  Host host;
  TempDir big;
  host.home.write("s/config.toml", "[storage_roots]\nbig = \"" + big.path() + "\"\n");
  LoadOptions options =
      host.options("shop:\n  storage_root: big\n  blocks:\n    app: {command: [sh]}\n");
  auto settings = load_user_settings(options.env);
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  options.settings = *settings;
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->storage_root, big.path());

  options = host.options("shop:\n  storage_root: bog\n  blocks:\n    app: {command: [sh]}\n");
  options.settings = *settings;
  auto unknown = load_stack(options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            host.at("2:17: storage root 'bog' is not named in config.toml (add [storage_roots] bog "
                    "= \"/absolute/dir\"; it names big); did you mean 'big'?"));
}

TEST(StorageRootName, ConfigTomlRefusesABadTable) {
  TempDir home;
  auto relative = parse_settings("[storage_roots]\nbig = \"disk\"\n", home / "config.toml");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(
      relative.error().message,
      home / "config.toml" + ":2:7: 'storage_roots.big' must be an absolute path, got 'disk'");
  auto bad_name = parse_settings("[storage_roots]\nBig = \"/x\"\n", home / "config.toml");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_NE(bad_name.error().message.find(home / "config.toml:2:7: "), std::string::npos)
      << bad_name.error().message;
}

TEST(Tools, EachToolIsFoundShownAndOnPath) {
  Host host;
  host.programs.program("opt/node/bin/node");
  auto stack =
      load_stack(host.options("shop:\n  blocks:\n    app:\n      command: [sh]\n"
                              "      tools:\n        node: {search: [/opt/node/bin]}\n"));
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock& app = stack->blocks[0];
  std::string dir = host.programs / "opt/node/bin";
  EXPECT_NE(bind_at(app.policy.read_only, dir), nullptr);
  EXPECT_EQ(env_value(app, "PATH").rfind(dir + ":", 0), 0u) << env_value(app, "PATH");
  auto node = std::find_if(app.programs.begin(), app.programs.end(),
                           [](const auto& p) { return p.first == "node"; });
  ASSERT_NE(node, app.programs.end());
  EXPECT_EQ(node->second, dir + "/node");
}

TEST(Tools, AMissingToolNamesItsPackage) {
  Host host;
  auto missing =
      load_stack(host.options("shop:\n  blocks:\n    app:\n      command: [sh]\n"
                              "      tools:\n        nodejs-x: {packages: {apt: nodejs}}\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(
      missing.error().message,
      host.at("6:9: app: tool 'nodejs-x' not found; install it with: apt-get install nodejs"));
  auto list = load_stack(host.options(
      "shop:\n  blocks:\n    app:\n      command: [sh]\n      tools: [sh, no-such-tool-x]\n"));
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(
      list.error().message,
      host.at("5:19: app: tool 'no-such-tool-x' not found in PATH or its search directories"));
  auto path = load_stack(
      host.options("shop:\n  blocks:\n    app:\n      command: [sh]\n      tools: [/bin/sh]\n"));
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.error().message,
            host.at("5:15: 'tools' names a program, got '/bin/sh' (a name found on PATH, or NAME: "
                    "{search: [DIR]})"));
}

TEST(Sources, TheProjectsDefinitionsComeBeforeTheCatalog) {
  Host host;
  host.programs.program("usr/bin/acme-svc");
  host.home.write("blocks/acme.svc.yml",
                  "acme.svc:\n  serves: {http: {port: 7000}}\n"
                  "  programs: {acme-svc: {}}\n  command: [acme-svc, \"${serves.http}\"]\n");
  auto stack = load_stack(host.options("shop:\n  sources: [./blocks]\n  blocks:\n    acme.svc:\n"));
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->blocks[0].definition_file, host.home / "blocks/acme.svc.yml");
  EXPECT_EQ(stack->blocks[0].command.back(), "7000");

  auto missing = load_stack(host.options("shop:\n  sources: ./defs\n  blocks:\n    acme.svc:\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            host.at("2:12: 'sources' directory " + host.home / "defs" + " does not exist"));
}

// The project of tests/fixtures/good/documented: every form above at once, with a substack.
TEST(DocumentedProject, EveryFormLoadsWithItsMeaning) {
  TempDir home;
  TempDir programs;
  for (const char* program : {"postgres", "initdb", "pg_isready"})
    programs.program(std::string("usr/lib/postgresql/16/bin/") + program);
  std::string dir = testing::fixtures() + "/good/documented";
  LoadOptions options;
  options.file = dir + "/stackie-stack.yml";
  options.cwd = dir;
  options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "s"}, {"PATH", "/usr/bin:/bin"}};
  options.block_path = {testing::shipped_catalog()};
  options.shipped_block_path = options.block_path;
  options.os = "linux";
  options.program_root = programs.path();
  options.settings.storage_roots = {{"scratch", home / "scratch"}};
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->storage_root, home / "scratch");
  std::vector<std::string> names;
  for (const auto& block : stack->blocks) names.push_back(block.name);
  ASSERT_EQ(names.size(), 4u);
  auto block = [&](const std::string& name) -> const ResolvedBlock& {
    return stack
        ->blocks[static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin())];
  };
  EXPECT_EQ(block("web").name, names.back()) << "web consumes the other three";
  EXPECT_EQ(env_value(block("stackie.postgres"), "PGDATA"), "/var/lib/postgresql/data");
  EXPECT_EQ(block("acme.mailer").definition_file, dir + "/stackie-blocks/acme.mailer.yml");
  EXPECT_EQ(block("invoices").policy.working_dir, dir + "/billing");
  EXPECT_EQ(env_value(block("invoices"), "CURRENCY"), "EUR");
  const BindMount* uploads = bind_at(block("web").policy.read_write, "/srv/uploads");
  ASSERT_NE(uploads, nullptr);
  EXPECT_EQ(uploads->source, home / "scratch/volumes/shop/web/uploads");
  const auto& tools = block("web").programs;
  EXPECT_TRUE(
      std::any_of(tools.begin(), tools.end(), [](const auto& p) { return p.first == "python3"; }));
  EXPECT_TRUE(stack->warnings.empty()) << stack->warnings.front();
}

}  // namespace
}  // namespace stackie
