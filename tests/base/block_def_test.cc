#include "stack/block_def.h"

#include <gtest/gtest.h>

#include <csignal>

#include "test_support.h"

namespace stackie {
namespace {

Result<BlockDef> parse(const std::string& text, const std::string& name = "acme.svc") {
  STACKIE_TRY_ASSIGN(root, parse_yaml(text, "b.yml"));
  return parse_block_def(root, "b.yml", name);
}

TEST(BlockDef, EveryField) {
  auto def = parse(R"(acme.svc:
  description: a service
  vars: {a: "1"}
  serves: {web: {port: 80, type: http}}
  paths: {data: {volume: data}, sock: {runtime: sock}}
  programs:
    svc: {names: [svc, svcd], search: [/opt/svc/*/bin], packages: {apt: svc, brew: svc, winget: Acme.Svc}}
    helper:
  environment: {A: "${vars.a}"}
  init:
    - if:
        not_exists: ${paths.data}/ready
        then:
          - run: [svc, --init]
          - append_file: {path: "${paths.data}/conf", text: "x=1\n"}
  command: svc --serve
  health: {http: {port: web, path: /up, status: 204}, interval: 2s}
  stop_signal: INT
  stop_timeout: 1m
  sandbox: {read_only: [/etc/ssl], read_write: ["${paths.data}"], network: host, identity: user}
)");
  ASSERT_TRUE(def.ok()) << def.error().message;
  EXPECT_EQ(def->name, "acme.svc");
  EXPECT_EQ(def->description, "a service");
  ASSERT_EQ(def->serves.size(), 1u);
  EXPECT_EQ(def->serves[0].port, 80);
  ASSERT_EQ(def->paths.size(), 2u);
  EXPECT_EQ(def->paths[1].kind, PathDecl::Kind::runtime);
  ASSERT_EQ(def->programs.size(), 2u);
  EXPECT_EQ(def->programs[0].names, (std::vector<std::string>{"svc", "svcd"}));
  EXPECT_EQ(def->programs[0].packages.at("winget"), "Acme.Svc");
  EXPECT_EQ(def->programs[1].names, (std::vector<std::string>{"helper"}));
  ASSERT_EQ(def->init.size(), 1u);
  ASSERT_TRUE(def->init[0].if_not_exists.has_value());
  EXPECT_EQ(def->init[0].then.size(), 2u);
  ASSERT_EQ(def->command.argv.size(), 3u);  // a string runs through /bin/sh -c
  EXPECT_EQ(def->command.argv[0].text, "/bin/sh");
  EXPECT_EQ(def->command.argv[2].text, "svc --serve");
  ASSERT_TRUE(def->health.has_value());
  EXPECT_EQ(def->health->kind, HealthCheck::Kind::http);
  EXPECT_EQ(def->health->http_status, 204);
  EXPECT_EQ(def->health->interval_ms, 2000);
  EXPECT_EQ(def->stop_signal, SIGINT);
  EXPECT_EQ(*def->stop_timeout_ms, 60000);
  EXPECT_EQ(*def->sandbox.network, NetworkMode::host);
  EXPECT_EQ(*def->sandbox.identity, Identity::user);
}

TEST(BlockDef, ErrorsArePositioned) {
  EXPECT_EQ(parse("acme.svc:\n  comand: [x]\n").error().message,
            "b.yml:2:3: unknown field 'comand' in block 'acme.svc'; did you mean 'command'?");
  EXPECT_EQ(parse("acme.svc:\n  vars: {}\n").error().message,
            "b.yml:1:1: block definition 'acme.svc' has no 'command'");
  EXPECT_EQ(parse("other:\n  command: [x]\n").error().message,
            "b.yml:1:1: this file defines 'other', expected 'acme.svc'");
  EXPECT_EQ(parse("acme.svc:\n  command: [x]\n  init:\n    - {run: [a], append_file: {path: /a, "
                  "text: b}}\n")
                .error()
                .message,
            "b.yml:4:7: an init step has exactly one of 'if', 'run', 'append_file'");
  EXPECT_EQ(parse("acme.svc:\n  command: [x]\n  sandbox: {network: lan}\n").error().message,
            "b.yml:3:22: unknown network mode 'lan' (expected none, localhost or host)");
  EXPECT_EQ(
      parse("acme.svc:\n  command: [x]\n  programs: {x: {packages: {yum: x}}}\n").error().message,
      "b.yml:3:29: unknown field 'yum' in programs.x.packages");
  EXPECT_EQ(parse("acme.svc:\n  command: [x]\n  paths: {data: {volume: ../up}}\n").error().message,
            "b.yml:3:26: invalid volume name '../up': use only a-z, 0-9, '.', '_' and '-', not "
            "starting with '.' or '-' nor ending with '.' (names become directory names)");
  EXPECT_EQ(parse("acme.svc:\n  command: [x]\n  serves: {web: {type: http}}\n").error().message,
            "b.yml:3:12: 'serves.web' needs a 'port'");
  EXPECT_EQ(parse("acme.svc:\n  command: [x]\n  health: {tcp: web, exec: [x]}\n").error().message,
            "b.yml:3:11: 'health' has exactly one of 'tcp', 'http' or 'exec'");
  EXPECT_EQ(parse("acme.svc:\n  command: [x]\n  stop_signal: SIGFOO\n").error().message,
            "b.yml:3:16: unknown signal 'SIGFOO' (expected e.g. SIGTERM, SIGINT, SIGQUIT)");
  EXPECT_EQ(parse("a: {command: [x]}\nb: {command: [x]}\n", "").error().message,
            "b.yml:2:1: second top-level key 'b'; a block definition has exactly one, the block "
            "name");
}

TEST(BlockDef, TheShippedCatalogLoads) {
  for (const char* name : {"stackie.postgres", "stackie.redis"}) {
    auto def =
        load_block_def(testing::source_root() + "/share/stackie/blocks/" + name + ".yml", name);
    ASSERT_TRUE(def.ok()) << def.error().message;
    EXPECT_FALSE(def->programs.empty()) << name;
    EXPECT_TRUE(def->health.has_value()) << name;
    for (const auto& program : def->programs)
      EXPECT_TRUE(program.packages.count("apt") && program.packages.count("brew") &&
                  program.packages.count("winget"))
          << name << " " << program.name;
  }
}

TEST(BlockDef, SignalNames) {
  EXPECT_EQ(stop_signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(stop_signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(stop_signal_name(63), "63");
}

}  // namespace
}  // namespace stackie
