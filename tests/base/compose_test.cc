// Compose compatibility (issue 22): the value languages (ports, interpolation, images), and
// the corpus under tests/fixtures/compose loaded through load_stack, with the exact warnings.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "stack/compose_file.h"
#include "stack/compose_values.h"
#include "stack/loader.h"
#include "stack/secrets.h"
#include "stack/stack_file.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::fixtures;
using testing::TempDir;

YamlNode scalar(const std::string& text) {
  return make_scalar(text, SourceLocation{"compose.yml", 3, 7});
}

std::vector<std::tuple<int, int, std::string>> ports_of(const std::string& text) {
  auto parsed = parse_yaml(text, "compose.yml");
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  auto spec = parse_compose_port(*parsed);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  std::vector<std::tuple<int, int, std::string>> out;
  if (spec.ok())
    for (const auto& port : spec->ports) out.emplace_back(port.container, port.host, port.host_ip);
  return out;
}

TEST(ComposePorts, EveryShortAndLongForm) {
  using P = std::vector<std::tuple<int, int, std::string>>;
  EXPECT_EQ(ports_of("3000"), (P{{3000, 0, ""}}));
  EXPECT_EQ(ports_of("\"8000:8000\""), (P{{8000, 8000, ""}}));
  EXPECT_EQ(ports_of("\"49100:22\""), (P{{22, 49100, ""}}));
  EXPECT_EQ(ports_of("\"127.0.0.1:8001:80\""), (P{{80, 8001, "127.0.0.1"}}));
  EXPECT_EQ(ports_of("\"[::1]:6001:6001\""), (P{{6001, 6001, "::1"}}));
  EXPECT_EQ(ports_of("\"3000-3002\""), (P{{3000, 0, ""}, {3001, 0, ""}, {3002, 0, ""}}));
  EXPECT_EQ(ports_of("\"9090-9091:8080-8081\""), (P{{8080, 9090, ""}, {8081, 9091, ""}}));
  EXPECT_EQ(ports_of("\"127.0.0.1:5000-5001:5000-5001\""),
            (P{{5000, 5000, "127.0.0.1"}, {5001, 5001, "127.0.0.1"}}));
  EXPECT_EQ(ports_of("{target: 80, published: \"8080\", host_ip: 127.0.0.1, protocol: tcp}"),
            (P{{80, 8080, "127.0.0.1"}}));
  auto udp = parse_compose_port(scalar("6060:6060/udp"));
  ASSERT_TRUE(udp.ok());
  EXPECT_EQ(udp->protocol, "udp");
}

TEST(ComposePorts, BadFormsSayWhereAndWhat) {
  auto bad = parse_compose_port(scalar("8080-8081:80"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "compose.yml:3:7: invalid port '8080-8081:80': the host range and the container "
            "range differ in length (expected e.g. 8080, 8080:80, 127.0.0.1:8080:80, "
            "9090-9091:8080-8081)");
  EXPECT_FALSE(parse_compose_port(scalar("http")).ok());
  EXPECT_FALSE(parse_compose_port(scalar("70000")).ok());
  EXPECT_FALSE(parse_compose_port(scalar("1:2:3:4")).ok());
}

TEST(ComposeInterpolation, BecomesSecretsOrTheDefault) {
  SecretKnown known = [](const std::string& name) { return name == "SET"; };
  auto translate = [&](const std::string& text) {
    auto out = translate_interpolation(scalar(text), known);
    EXPECT_TRUE(out.ok()) << out.error().message;
    return out.ok() ? out->text : "";
  };
  EXPECT_EQ(translate("${SET}"), "${secrets.SET}");
  EXPECT_EQ(translate("$SET/x"), "${secrets.SET}/x");
  EXPECT_EQ(translate("${SET:-fallback}"), "${secrets.SET}");
  EXPECT_EQ(translate("${UNSET:-fallback}"), "fallback");
  EXPECT_EQ(translate("${UNSET-a$b}"), "a$$b");
  EXPECT_EQ(translate("${SET:?must be set}"), "${secrets.SET}");
  EXPECT_EQ(translate("${SET:+yes}${UNSET:+no}"), "yes");
  EXPECT_EQ(translate("cost $$5"), "cost $$5");
  auto bad = translate_interpolation(scalar("a ${X"), known);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "compose.yml:3:10: unclosed '${' in 'a ${X'");
}

TEST(ComposeImage, RepositoryAndTag) {
  EXPECT_EQ(parse_image("postgres").repository, "postgres");
  EXPECT_EQ(parse_image("postgres:16-alpine").tag, "16-alpine");
  EXPECT_EQ(parse_image("docker.io/library/Redis:7").repository, "redis");
  EXPECT_EQ(parse_image("localhost:5000/team/api:1.2").repository, "api");
  EXPECT_EQ(parse_image("localhost:5000/team/api:1.2").tag, "1.2");
  EXPECT_EQ(parse_image("redis@sha256:abc").tag, "");
}

TEST(ComposeDetect, ServicesMapIsCompose) {
  EXPECT_TRUE(looks_like_compose(*parse_yaml("services:\n  a: {image: x}\n", "f")));
  EXPECT_TRUE(looks_like_compose(*parse_yaml("name: x\nservices:\n  a:\n", "f")));
  // A stack that happens to be named "services" is a stack file.
  EXPECT_FALSE(looks_like_compose(*parse_yaml("services:\n  blocks:\n    a: {}\n", "f")));
  EXPECT_FALSE(looks_like_compose(*parse_yaml("shop:\n  blocks:\n    a: {}\n", "f")));
}

// ---- the corpus through the real loader --------------------------------------------------------

struct Corpus {
  TempDir home;
  TempDir host;  // a fake host with postgres and redis installed the Debian way
  LoadOptions options;

  explicit Corpus(const std::string& dir) {
    for (const char* program : {"postgres", "initdb", "pg_isready"})
      host.program(std::string("usr/lib/postgresql/16/bin/") + program);
    host.program("usr/bin/redis-server");
    host.program("usr/bin/redis-cli");
    options.cwd = fixtures() + "/compose/" + dir;
    options.env = {
        {"HOME", home.path()}, {"STACKIE_HOME", home / "stackie"}, {"PATH", "/usr/bin:/bin"}};
    options.block_path = {testing::shipped_catalog()};
    options.shipped_block_path = options.block_path;
    options.os = "linux";
    options.program_root = host.path();
  }
  std::string file(const std::string& name) const { return options.cwd + "/" + name; }
};

const ResolvedBlock& block(const ResolvedStack& stack, const std::string& name) {
  static const ResolvedBlock none;
  for (const auto& b : stack.blocks)
    if (b.name == name) return b;
  ADD_FAILURE() << "no block " << name;
  return none;
}

std::string env_of(const ResolvedBlock& b, const std::string& name) {
  for (const auto& [key, value] : b.policy.environment)
    if (key == name) return value;
  return "<unset>";
}

std::vector<std::string> names_of(const std::vector<ConsumedPort>& consumes) {
  std::vector<std::string> out;
  for (const auto& c : consumes)
    out.push_back(c.name + "=" + c.provider + ":" + std::to_string(c.local_port));
  return out;
}

TEST(ComposeCorpus, WebIsDiscoveredAndMapsOntoTheCatalog) {
  Corpus corpus("web");
  auto stack = load_stack(corpus.options);  // no -f: compose.yaml is discovered
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->name, "web");
  EXPECT_EQ(stack->file, corpus.file("compose.yaml"));
  ASSERT_EQ(stack->blocks.size(), 3u);
  const ResolvedBlock& db = block(*stack, "db");
  EXPECT_FALSE(db.first_party);
  EXPECT_EQ(db.definition_file,
            testing::source_root() + "/share/stackie/blocks/stackie.postgres.yml");
  EXPECT_EQ(db.sandbox_id, "web-db");
  EXPECT_EQ(env_of(db, "PGUSER"), "app");
  EXPECT_EQ(env_of(db, "PGDATABASE"), "shop");
  EXPECT_EQ(env_of(db, "POSTGRES_PASSWORD"), "devpass");  // ${POSTGRES_PASSWORD:-devpass}
  EXPECT_EQ(db.restart, RestartPolicy::always);           // unless-stopped
  ASSERT_EQ(db.serves.size(), 1u);
  EXPECT_EQ(db.serves[0].host_port, 5432);
  EXPECT_EQ(env_of(db, "PGDATA"),
            corpus.home / "stackie/storage/volumes/web/db/data");  // pgdata: the block's data
  const ResolvedBlock& app = block(*stack, "app");
  EXPECT_TRUE(app.first_party);
  EXPECT_EQ(app.command, (std::vector<std::string>{"/bin/sh", "-c", "python3 app.py"}));
  EXPECT_EQ(app.policy.working_dir, corpus.file("app"));
  EXPECT_EQ(env_of(app, "DATABASE_URL"), "postgres://app:devpass@db:5432/shop");
  EXPECT_EQ(names_of(app.consumes), (std::vector<std::string>{"db=db:5432", "cache=cache:6379"}));
  EXPECT_EQ(app.policy.host_names, (std::vector<std::string>{"db", "cache"}));
  EXPECT_EQ(
      app.depend_conditions,
      (std::vector<std::pair<std::string, DependCondition>>{{"cache", DependCondition::started}}));
  EXPECT_EQ(app.stop_signal, 2);
  EXPECT_EQ(app.stop_timeout, Milliseconds(5000));
  ASSERT_EQ(app.serves.size(), 1u);
  EXPECT_EQ(app.serves[0].port, 8000);
  // dependencies first
  EXPECT_EQ(stack->blocks.back().name, "app");
  std::string f = corpus.file("compose.yaml");
  EXPECT_EQ(stack->warnings,
            (std::vector<std::string>{
                f + ":5:12: warning: image tag '16-alpine' is not a version constraint: "
                    "stackie.postgres runs the newest postgres installed on this host",
                f + ":16:7: warning: 'healthcheck' of 'db' is not mapped: stackie.postgres has "
                    "its own health check",
                f + ":22:12: warning: image tag '7-alpine' is not a version constraint: "
                    "stackie.redis runs the newest redis installed on this host",
            }));
}

TEST(ComposeCorpus, AValueFromTheEnvironmentWinsOverTheDefault) {
  Corpus corpus("web");
  corpus.options.env["POSTGRES_PASSWORD"] = "from-env";
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(env_of(block(*stack, "db"), "POSTGRES_PASSWORD"), "from-env");
  EXPECT_EQ(env_of(block(*stack, "app"), "DATABASE_URL"), "postgres://app:from-env@db:5432/shop");
}

TEST(ComposeCorpus, WorkerConditionsAndTheXStackieCommand) {
  Corpus corpus("worker");
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->name, "worker");  // the directory's name
  const ResolvedBlock& worker = block(*stack, "worker");
  EXPECT_EQ(worker.command, (std::vector<std::string>{
                                "/bin/sh", "-c", "python3 -m http.server 9000 --bind 127.0.0.1"}));
  EXPECT_EQ(worker.restart, RestartPolicy::on_failure);
  EXPECT_EQ(worker.depend_conditions, (std::vector<std::pair<std::string, DependCondition>>{
                                          {"migrate", DependCondition::completed_successfully}}));
  const ResolvedBlock& migrate = block(*stack, "migrate");
  EXPECT_EQ(migrate.restart, RestartPolicy::no);
  EXPECT_EQ(names_of(migrate.consumes), (std::vector<std::string>{"db=db:5432"}));
  const ResolvedBlock& api = block(*stack, "api");
  EXPECT_EQ(api.policy.working_dir, corpus.options.cwd);
  std::vector<int> ports;
  for (const auto& port : api.serves) ports.push_back(port.host_port);
  EXPECT_EQ(ports, (std::vector<int>{8080, 9090, 9091}));
  // The list form: db and worker, consumed (each serves a port).
  EXPECT_EQ(names_of(api.consumes), (std::vector<std::string>{"db=db:5432", "worker=worker:9000"}));
  EXPECT_TRUE(api.depend_conditions.empty());
  std::vector<std::string> order;
  for (const auto& b : stack->blocks) order.push_back(b.name);
  EXPECT_EQ(order, (std::vector<std::string>{"db", "migrate", "worker", "api"}));
  std::string f = corpus.file("docker-compose.yml");
  EXPECT_EQ(stack->warnings,
            (std::vector<std::string>{
                f + ":2:1: warning: 'version' is ignored (obsolete in the Compose Specification)",
                f + ":35:7: warning: 'build.dockerfile' is not mapped (Stackie runs no image "
                    "build; the block runs in the build context)",
                f + ":5:12: warning: image tag '15' is not a version constraint: "
                    "stackie.postgres runs the newest postgres installed on this host",
                f + ":20:12: warning: image 'myorg/worker:latest' is not used: 'worker' runs "
                    "its command on this host",
                f + ":30:14: warning: the retry count of 'on-failure:3' is not mapped: "
                    "Stackie's restart policy backs off without a limit",
            }));
}

TEST(ComposeCorpus, HealthchecksInEveryForm) {
  Corpus corpus("healthchecks");
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const HealthCheck& exec = block(*stack, "exec-form").health;
  EXPECT_EQ(exec.kind, HealthCheck::Kind::exec);
  EXPECT_EQ(exec.argv, (std::vector<std::string>{"test", "-d", "/"}));
  EXPECT_EQ(exec.interval, Milliseconds(2000));
  EXPECT_EQ(exec.timeout, Milliseconds(1000));
  EXPECT_EQ(exec.retries, 4);
  EXPECT_EQ(exec.start_period, Milliseconds(30000));
  const HealthCheck& shell = block(*stack, "shell-form").health;
  EXPECT_EQ(shell.argv, (std::vector<std::string>{"/bin/sh", "-c", "test -d / || exit 1"}));
  EXPECT_EQ(shell.interval, Milliseconds(90000));
  EXPECT_EQ(block(*stack, "string-form").health.argv,
            (std::vector<std::string>{"/bin/sh", "-c", "test -d /"}));
  EXPECT_EQ(block(*stack, "none-form").health.kind, HealthCheck::Kind::none);
  EXPECT_EQ(block(*stack, "disabled").health.kind, HealthCheck::Kind::none);
  // NONE turns off the catalog block's own check too.
  EXPECT_EQ(block(*stack, "cache").health.kind, HealthCheck::Kind::none);
  EXPECT_EQ(stack->warnings.size(), 5u);  // the five alpine images, each not used
}

TEST(ComposeCorpus, EveryUnmappedKeyIsOneWarningAtItsLine) {
  Corpus corpus("unmapped");
  corpus.options.env["POSTGRES_PASSWORD"] = "example";  // as the postgres image needs it too
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  std::string f = corpus.file("compose.yml");
  const std::string networks =
      "'networks' is not needed: blocks reach each other through consumes, and inside each "
      "sandbox a service's name resolves to the port it serves (see stackie-compose(7))";
  EXPECT_EQ(
      stack->warnings,
      (std::vector<std::string>{
          f + ":2:1: warning: 'version' is ignored (obsolete in the Compose Specification)",
          f + ":26:1: warning: " + networks,
          f + ":30:5: warning: 'volumes.appdata.driver' is not mapped (a Stackie volume is a "
              "directory under the storage root)",
          f + ":31:1: warning: top-level 'secrets' is not mapped",
          f + ":6:5: warning: 'container_name' is not mapped: the block's sandbox is named "
              "<stack>-db",
          f + ":12:5: warning: 'networks' of service 'db': " + networks,
          f + ":18:9: warning: 'ports': udp port not mapped (Stackie forwards TCP only)",
          f + ":22:5: warning: 'deploy' of service 'app' is not mapped",
          f + ":24:5: warning: 'logging' of service 'app' is not mapped",
          f + ":9:7: warning: environment 'PGDATA' of 'db' is not mapped onto stackie.postgres: "
              "the block keeps its cluster in its own data volume",
          f + ":7:14: warning: 'command' of 'db' is not mapped: stackie.postgres runs its own "
              "server command",
          f + ":11:9: warning: volume at '/docker-entrypoint-initdb.d/init.sql' of 'db' is not "
              "mapped: stackie.postgres keeps its data in its own volume ('data')",
          f + ":14:12: warning: image 'python:3.12' is not used: 'app' runs its command on this "
              "host",
          f + ":17:9: warning: host address '0.0.0.0' is not mapped: Stackie publishes ports on "
              "127.0.0.1 only",
          f + ":20:9: warning: anonymous volume '/var/cache' of 'app' is not mapped",
          f + ":21:9: warning: volume 'appdata' of 'app' is a directory of the block's storage, "
              "not mounted at '/srv/data': the block finds it as ${paths.appdata}",
      }));
}

std::vector<std::string> block_names(const ResolvedStack& stack) {
  std::vector<std::string> out;
  for (const auto& b : stack.blocks) out.push_back(b.name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ComposeCorpus, ProfilesPickServicesAndEnvFilesSetThem) {
  Corpus corpus("profiles");
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(block_names(*stack), (std::vector<std::string>{"db", "web"})) << "no profile asked";
  for (const auto& warning : stack->warnings) {
    EXPECT_EQ(warning.find("'env_file'"), std::string::npos) << warning;
    EXPECT_EQ(warning.find("'profiles'"), std::string::npos) << warning;
  }
  // A first-party service keeps its env file, taken as written ($HOME stays "$HOME").
  const ResolvedBlock& web = block(*stack, "web");
  EXPECT_EQ(env_of(web, "GREETING"), "hello $HOME");
  EXPECT_EQ(env_of(web, "MODE"), "dev");
  // A catalog service's env file sets the image's documented variables, under `environment`;
  // the optional .env.local is missing and that is fine.
  const ResolvedBlock& db = block(*stack, "db");
  EXPECT_EQ(env_of(db, "PGUSER"), "app");
  EXPECT_EQ(env_of(db, "POSTGRES_PASSWORD"), "s3cret");
  EXPECT_EQ(env_of(db, "PGDATABASE"), "shop");

  corpus.options.profiles = {"mail"};
  auto with_mail = load_stack(corpus.options);
  ASSERT_TRUE(with_mail.ok()) << with_mail.error().message;
  EXPECT_EQ(block_names(*with_mail), (std::vector<std::string>{"db", "mail", "web"}));
}

TEST(ComposeCorpus, AMissingEnvFileSaysWhereItIsNamed) {
  TempDir dir;
  dir.write("compose.yml", "services:\n  db:\n    image: postgres\n    env_file: nope.env\n");
  Corpus corpus("profiles");
  corpus.options.cwd = dir.path();
  auto stack = load_stack(corpus.options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message.rfind(dir / "compose.yml:4:15: ", 0), 0u)
      << stack.error().message;
  EXPECT_NE(stack.error().message.find("env_file of service 'db'"), std::string::npos)
      << stack.error().message;
}

TEST(ComposeCorpus, AnImageWithNoCommandSaysWhatToAdd) {
  Corpus corpus("unknown-image");
  auto stack = load_stack(corpus.options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message,
            corpus.file("compose.yml") +
                ":2:3: service 'web': image 'traefik:3.1' is not in the Stackie catalog and the "
                "service has no command to run natively; add to it `x-stackie: {command: ...}` "
                "with the command that runs it on this host");
}

// nginx maps by name onto stackie.nginx, a proxy that needs routes: it used to load and fail
// at `up` ("no routes"); now the load says so at the image, and x-stackie still runs one.
TEST(ComposeCorpus, AnImageTheCatalogBlockCannotServeIsRefusedAtItsLine) {
  TempDir dir;
  dir.write("compose.yml", "services:\n  web:\n    image: nginx:1.25\n    ports: [\"8080:80\"]\n");
  Corpus corpus("web");
  corpus.options.cwd = dir.path();
  auto stack = load_stack(corpus.options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message.rfind(dir / "compose.yml:3:12: service 'web': image "
                                              "'nginx:1.25' cannot be mapped: stackie.nginx is a "
                                              "reverse proxy",
                                        0),
            0u)
      << stack.error().message;
  EXPECT_NE(stack.error().message.find("x-stackie: {command: ...}"), std::string::npos);

  dir.write("compose.yml",
            "services:\n  web:\n    image: nginx:1.25\n"
            "    x-stackie: {command: sleep 100}\n");
  auto own = load_stack(corpus.options);
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_EQ(own->blocks.at(0).definition_file.find("stackie.nginx"), std::string::npos)
      << "x-stackie makes it a block of its own, not " << own->blocks.at(0).definition_file;
}

// A catalog block from outside Stackie's catalog (the user's copy on STACKIE_BLOCK_PATH) reads
// only the secrets listed: compose has no field for it, so the extension says it.
TEST(ComposeCorpus, XStackieListsTheSecretsOfADefinitionFromElsewhere) {
  TempDir dir;
  dir.write("compose.yml", "services:\n  db:\n    image: postgres:16\n");
  Corpus corpus("web");
  corpus.options.cwd = dir.path();
  corpus.options.env["POSTGRES_PASSWORD"] = "pw";
  corpus.options.shipped_block_path = {};
  auto unlisted = load_stack(corpus.options);
  ASSERT_FALSE(unlisted.ok());
  EXPECT_NE(unlisted.error().message.find(
                "add POSTGRES_PASSWORD to the service's `x-stackie: {secrets: [...]}` (" +
                dir / "compose.yml:2:3)"),
            std::string::npos)
      << unlisted.error().message;
  dir.write("compose.yml",
            "services:\n  db:\n    image: postgres:16\n"
            "    x-stackie: {secrets: [POSTGRES_PASSWORD]}\n");
  auto listed = load_stack(corpus.options);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_EQ(env_of(block(*listed, "db"), "POSTGRES_PASSWORD"), "pw");
}

TEST(ComposeCorpus, DashFOnAComposeFileAndUnknownDependency) {
  TempDir dir;
  dir.write("docker-compose.yml", "services:\n  a:\n    command: sleep 1\n    depends_on: [b]\n");
  Corpus corpus("web");
  corpus.options.cwd = dir.path();
  corpus.options.file = "docker-compose.yml";
  auto stack = load_stack(corpus.options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message, dir / "docker-compose.yml" +
                                       ":4:18: service 'a' depends on 'b', which is not a "
                                       "service here");
}

TEST(ComposeCorpus, MergeKeysAndSharedSettings) {
  TempDir dir;
  dir.write("compose.yml",
            "x-common: &common\n  restart: always\n  environment: {MODE: dev}\n"
            "services:\n  a:\n    <<: *common\n    command: sleep 100\n");
  Corpus corpus("web");
  corpus.options.cwd = dir.path();
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->blocks[0].restart, RestartPolicy::always);
  EXPECT_EQ(env_of(stack->blocks[0], "MODE"), "dev");
  EXPECT_TRUE(stack->warnings.empty());
}

TEST(ComposeCorpus, ABindIsReadOnlyWhenMarkedRo) {
  TempDir dir;
  dir.write("conf/app.ini", "x=1\n");
  dir.write("compose.yml",
            "services:\n  a:\n    command: sleep 100\n    volumes:\n"
            "      - ./conf:/etc/app:ro\n");
  Corpus corpus("web");
  corpus.options.cwd = dir.path();
  auto stack = load_stack(corpus.options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const SandboxPolicy& policy = stack->blocks[0].policy;
  auto has = [](const std::vector<BindMount>& binds, const std::string& path) {
    return std::any_of(binds.begin(), binds.end(),
                       [&](const BindMount& bind) { return bind.source == path; });
  };
  EXPECT_TRUE(has(policy.read_only, dir / "conf"));
  EXPECT_FALSE(has(policy.read_write, dir / "conf"));
}

// `stackie convert`: the printed stack file loads to the same blocks as the Compose file.
class ComposeConvert : public ::testing::TestWithParam<std::string> {};

TEST_P(ComposeConvert, TheStackFileLoadsToTheSameBlocks) {
  Corpus corpus("web");
  corpus.options.env["POSTGRES_PASSWORD"] = "example";  // the unmapped corpus's db needs one
  TempDir copy;
  std::filesystem::copy(fixtures() + "/compose/" + GetParam(), copy.path(),
                        std::filesystem::copy_options::recursive);
  corpus.options.cwd = copy.path();
  auto from_compose = load_stack(corpus.options);
  ASSERT_TRUE(from_compose.ok()) << from_compose.error().message;
  auto text = convert_compose(from_compose->file, corpus.options.env, corpus.options.block_path);
  ASSERT_TRUE(text.ok()) << text.error().message;
  // Every warning is a comment of the header, by line.
  for (const auto& warning : from_compose->warnings) {
    std::string line = warning.substr(from_compose->file.size() + 1);
    line = line.substr(0, line.find(':'));
    EXPECT_NE(text->find("#   " + line + ": "), std::string::npos) << warning << "\n" << *text;
  }
  copy.write("stackie-stack.yml", *text);
  auto converted = load_stack(corpus.options);  // stackie-stack.yml is found first now
  ASSERT_TRUE(converted.ok()) << converted.error().message << "\n" << *text;
  EXPECT_EQ(converted->file, copy / "stackie-stack.yml");
  EXPECT_EQ(converted->name, from_compose->name);
  EXPECT_TRUE(converted->warnings.empty());
  ASSERT_EQ(converted->blocks.size(), from_compose->blocks.size());
  for (size_t i = 0; i < converted->blocks.size(); ++i) {
    ResolvedBlock expected = from_compose->blocks[i];
    ResolvedBlock got = converted->blocks[i];
    // Where the block was written differs by nature; and a first-party block's directory
    // holds the stack file, which it sees read-only.
    for (auto* block : {&expected, &got}) {
      block->definition_file.clear();
      block->command_where.clear();
      block->environment_sources.clear();  // file:line of each variable: two different files
      block->policy.read_only.erase(
          std::remove_if(block->policy.read_only.begin(), block->policy.read_only.end(),
                         [&](const BindMount& bind) {
                           return bind.source == converted->file ||
                                  bind.source == from_compose->file;
                         }),
          block->policy.read_only.end());
      // The companion secrets file is named after the stack file: <stem>.secrets.yml.
      block->policy.no_create.erase(
          std::remove_if(block->policy.no_create.begin(), block->policy.no_create.end(),
                         [&](const std::string& path) {
                           return path == companion_secrets_path(converted->file) ||
                                  path == companion_secrets_path(from_compose->file);
                         }),
          block->policy.no_create.end());
    }
    EXPECT_EQ(got, expected) << expected.name << "\n" << *text;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ComposeConvert,
                         ::testing::Values("web", "worker", "healthchecks", "unmapped",
                                           "profiles"));

TEST(ComposeConvert, AStackFileIsNotConverted) {
  TempDir dir;
  dir.write("stackie-stack.yml", "s:\n  blocks:\n    a: {command: [sh]}\n");
  auto text = convert_compose(dir / "stackie-stack.yml", {}, {});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message,
            dir / "stackie-stack.yml" + ": already a stack file, not a Compose file");
}

}  // namespace
}  // namespace stackie
