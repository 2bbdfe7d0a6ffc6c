#include "stack/loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "resolved_lookup.h"
#include "stack/command_check.h"
#include "stack/paths.h"
#include "stack/stack_file.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::env_value;
using testing::find_block;

using testing::fixtures;
using testing::TempDir;

// Loader options that depend on nothing of the host: a temp STACKIE_HOME, the fixture blocks
// (and the real catalog from the source tree), PATH only where the test says.
LoadOptions hermetic_options(const TempDir& home, std::string path = "/usr/bin:/bin") {
  LoadOptions options;
  options.cwd = home.path();
  options.env = {{"HOME", home.path()}, {"STACKIE_HOME", home / "stackie"}, {"PATH", path}};
  options.block_path = {fixtures() + "/blocks", testing::source_root() + "/share/stackie/blocks"};
  options.shipped_block_path = {testing::shipped_catalog()};
  options.os = "linux";
  return options;
}

// A fake host with postgres 9.6, 15 and 16 installed the Debian way and redis in /usr/bin.
void make_fake_host(const TempDir& root) {
  for (const char* version : {"9.6", "15", "16"})
    for (const char* program : {"postgres", "initdb", "pg_isready"})
      root.program(std::string("usr/lib/postgresql/") + version + "/bin/" + program);
  root.program("usr/bin/redis-server");
  root.program("usr/bin/redis-cli");
  root.program("usr/bin/sh");
}

bool has_bind(const std::vector<BindMount>& binds, const std::string& path) {
  return std::any_of(binds.begin(), binds.end(), [&](const BindMount& bind) {
    return bind.source == path && bind.dest.empty();
  });
}

// ---- bad input: one fixture per error, the expected message on its first line ----------------

struct BadFixture {
  std::string file;
  std::string expected;  // the whole one-line message
};

std::vector<BadFixture> bad_fixtures() {
  std::vector<BadFixture> out;
  std::string dir = fixtures() + "/bad";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string path = std::filesystem::absolute(entry.path()).lexically_normal().string();
    if (entry.is_directory()) {
      out.push_back({path, path + ": cannot read: Is a directory"});
      continue;
    }
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    const std::string marker = "# expect: ";
    EXPECT_EQ(first.rfind(marker, 0), 0u) << path << " has no '# expect:' line";
    out.push_back({path, path + ":" + first.substr(marker.size())});
  }
  std::sort(out.begin(), out.end(),
            [](const BadFixture& a, const BadFixture& b) { return a.file < b.file; });
  return out;
}

TEST(LoaderBadInput, EveryFixtureFailsWithItsExactMessage) {
  auto cases = bad_fixtures();
  ASSERT_GE(cases.size(), 25u) << "the bad fixtures went missing";
  for (const auto& bad : cases) {
    TempDir home;
    LoadOptions options = hermetic_options(home);
    options.file = bad.file;
    auto stack = load_stack(options);
    if (stack.ok()) {
      ADD_FAILURE() << bad.file << " loaded but should fail with: " << bad.expected;
      continue;
    }
    EXPECT_EQ(stack.error().message, bad.expected) << bad.file;
    EXPECT_EQ(stack.error().message.find('\n'), std::string::npos) << "not one line: " << bad.file;
  }
}

TEST(LoaderBadInput, UnreadableByPermission) {
  TempDir home;
  std::string file = home.write("stackie-stack.yml", "demo:\n  blocks:\n    a: {command: [sh]}\n");
  ::chmod(file.c_str(), 0);
  if (std::ifstream(file).good()) GTEST_SKIP() << "running as root: mode 000 does not stop reads";
  LoadOptions options = hermetic_options(home);
  auto stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message, file + ": cannot read: Permission denied");
}

TEST(LoaderBadInput, MissingProgramNamesThePackagePerOs) {
  TempDir home;
  TempDir empty_root;
  LoadOptions options = hermetic_options(home, empty_root / "bin");
  options.program_root = empty_root.path();
  options.file = home.write("s.yml", "demo:\n  blocks:\n    stackie.postgres:\n");
  auto linux_result = load_stack(options);
  ASSERT_FALSE(linux_result.ok());
  EXPECT_EQ(linux_result.error().message,
            options.file +
                ":3:5: stackie.postgres: program 'postgres' not found; install it with: "
                "apt-get install postgresql");
  options.os = "macos";
  EXPECT_NE(load_stack(options).error().message.find("install it with: brew install postgresql@16"),
            std::string::npos);
  options.os = "windows";
  EXPECT_NE(load_stack(options).error().message.find(
                "install it with: winget install PostgreSQL.PostgreSQL.16"),
            std::string::npos);
}

TEST(LoaderBadInput, NoStackFileInTheDirectory) {
  TempDir home;
  auto stack = load_stack(hermetic_options(home));
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message,
            home.path() +
                ": no stack file (looked for stackie-stack.yml, stackie-stack.yaml, "
                "stackie.yml, stackie.yaml, compose.yaml, compose.yml, "
                "docker-compose.yaml, docker-compose.yml; use -f FILE)");
}

// ---- good input -------------------------------------------------------------------------------

TEST(Loader, DiscoveryOrder) {
  TempDir home;
  home.write("stackie.yaml", "fourth:\n  blocks:\n    a: {command: [sh]}\n");
  home.write("stackie.yml", "third:\n  blocks:\n    a: {command: [sh]}\n");
  EXPECT_EQ(load_stack(hermetic_options(home))->name, "third");
  home.write("stackie-stack.yaml", "second:\n  blocks:\n    a: {command: [sh]}\n");
  EXPECT_EQ(load_stack(hermetic_options(home))->name, "second");
  home.write("stackie-stack.yml", "first:\n  blocks:\n    a: {command: [sh]}\n");
  auto stack = load_stack(hermetic_options(home));
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->name, "first");
  EXPECT_EQ(stack->file, home / "stackie-stack.yml");
  EXPECT_EQ(stack_file_names().front(), "stackie-stack.yml");
}

TEST(Loader, ThreeBlockStackWithTheRealCatalog) {
  TempDir home;
  TempDir host;
  make_fake_host(host);
  LoadOptions options = hermetic_options(home, host / "usr/bin");
  options.program_root = host.path();
  options.file = fixtures() + "/good/three_blocks/stackie-stack.yml";
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  std::string storage = home / "stackie/storage";
  EXPECT_EQ(stack->name, "shop");
  EXPECT_EQ(stack->storage_root, storage);
  ASSERT_EQ(stack->blocks.size(), 3u);
  EXPECT_EQ(stack->blocks[0].name, "stackie.postgres");
  EXPECT_EQ(stack->blocks[1].name, "stackie.redis");
  EXPECT_EQ(stack->blocks[2].name, "api");

  const ResolvedBlock& pg = stack->blocks[0];
  std::string pg_bin = host / "usr/lib/postgresql/16/bin";  // the newest of 9.6, 15, 16
  EXPECT_EQ(pg.sandbox_id, "shop-postgres");
  EXPECT_FALSE(pg.first_party);
  EXPECT_EQ(pg.definition_file,
            testing::source_root() + "/share/stackie/blocks/stackie.postgres.yml");
  std::string data = storage + "/volumes/shop/postgres/data";
  std::string run = storage + "/tmp/shop-postgres/run";
  EXPECT_EQ(pg.command,
            (std::vector<std::string>{pg_bin + "/postgres", "-D", data, "-c",
                                      "listen_addresses=127.0.0.1", "-p", "5432", "-k", run}));
  EXPECT_EQ(pg.stop_signal, SIGINT);
  EXPECT_EQ(pg.stop_timeout, Milliseconds(30000));
  EXPECT_EQ(pg.health.kind, HealthCheck::Kind::exec);
  EXPECT_EQ(pg.health.argv.front(), pg_bin + "/pg_isready");
  EXPECT_EQ(pg.policy.name, "shop-postgres");
  EXPECT_EQ(pg.policy.identity, Identity::user);
  EXPECT_EQ(pg.policy.network, NetworkMode::localhost);
  EXPECT_EQ(pg.policy.host_tmp_dir, storage + "/tmp/shop-postgres");
  EXPECT_TRUE(has_bind(pg.policy.read_write, data));
  EXPECT_TRUE(has_bind(pg.policy.read_write, run));
  EXPECT_TRUE(has_bind(pg.policy.read_only, pg_bin));
  // Of the host, the block gets its programs' directory (read-only) and its own paths: nothing
  // else (the lockbox adds only its fixed system view).
  EXPECT_EQ(pg.policy.read_only, (std::vector<BindMount>{{pg_bin, ""}}));
  EXPECT_EQ(pg.policy.read_write, (std::vector<BindMount>{{data, ""}, {run, ""}}));
  EXPECT_EQ(env_value(pg, "PGDATABASE"), "shop");  // the stack's var overrides the default
  EXPECT_EQ(env_value(pg, "POSTGRES_PASSWORD"), "correct-horse-battery");
  EXPECT_EQ(env_value(pg, "PATH"), pg_bin + ":/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(pg.secret_names, (std::vector<std::string>{"POSTGRES_PASSWORD"}));
  EXPECT_EQ(pg.secret_values, (std::vector<std::string>{"correct-horse-battery"}));
  ASSERT_EQ(pg.init.size(), 1u);
  EXPECT_EQ(pg.init[0].if_not_exists, data + "/PG_VERSION");
  ASSERT_EQ(pg.init[0].then.size(), 3u);
  EXPECT_EQ(pg.init[0].then[0].run.front(), "/bin/sh");
  EXPECT_EQ(pg.init[0].then[1].append_path, data + "/postgresql.conf");
  EXPECT_NE(pg.init[0].then[1].append_text.find("unix_socket_directories = '" + run + "'"),
            std::string::npos);
  EXPECT_EQ(pg.init[0].then[2].run.back(), "shop");

  const ResolvedBlock& redis = stack->blocks[1];
  EXPECT_EQ(redis.command.front(), host / "usr/bin/redis-server");
  EXPECT_EQ(redis.policy.identity, Identity::root);
  EXPECT_EQ(redis.stop_signal, SIGTERM);
  EXPECT_TRUE(has_bind(redis.policy.read_write, storage + "/volumes/shop/redis/data"));

  const ResolvedBlock& api = stack->blocks[2];
  EXPECT_TRUE(api.first_party);
  EXPECT_EQ(api.sandbox_id, "shop-api");
  EXPECT_EQ(api.command.front(), host / "usr/bin/sh");
  EXPECT_EQ(api.depends_on, (std::vector<std::string>{"stackie.postgres", "stackie.redis"}));
  ASSERT_EQ(api.consumes.size(), 2u);
  EXPECT_EQ(api.consumes[0], (ConsumedPort{"db", "stackie.postgres", "postgres", 5432}));
  EXPECT_EQ(api.consumes[1], (ConsumedPort{"cache", "stackie.redis", "redis", 6379}));
  EXPECT_EQ(env_value(api, "DATABASE_URL"),
            "postgres://postgres:correct-horse-battery@127.0.0.1:5432/shop");
  EXPECT_EQ(env_value(api, "REDIS_URL"), "redis://127.0.0.1:6379/0");
  EXPECT_EQ(env_value(api, "PRICE_LABEL"), "$5 off");
  EXPECT_EQ(env_value(api, "PORT"), "8080");
  EXPECT_EQ(api.secret_names, (std::vector<std::string>{"DATABASE_URL"}));
  EXPECT_EQ(api.restart, RestartPolicy::always);
  EXPECT_EQ(api.health.kind, HealthCheck::Kind::http);
  EXPECT_EQ(api.health.port, 8080);
  std::string api_dir = fixtures() + "/good/three_blocks/api";
  EXPECT_EQ(api.policy.working_dir, api_dir);
  EXPECT_TRUE(has_bind(api.policy.read_write, api_dir));
}

TEST(Loader, EveryStackFieldAndEmptyValues) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = fixtures() + "/good/full/stackie.yaml";
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->storage_root, "/var/tmp/stackie-fixture-storage");
  const ResolvedBlock* db = find_block(*stack, "fixture.db");
  const ResolvedBlock* worker = find_block(*stack, "worker");
  const ResolvedBlock* web = find_block(*stack, "web");
  ASSERT_TRUE(db && worker && web);
  EXPECT_EQ(db->serves[0], (ServedPort{"db", "postgres", 5433, 15433}));
  EXPECT_EQ(db->restart, RestartPolicy::no);
  EXPECT_EQ(db->stop_signal, SIGQUIT);
  EXPECT_EQ(db->stop_timeout, Milliseconds(5000));
  EXPECT_TRUE(has_bind(db->policy.read_write, "/var/tmp/stackie-fixture-pgdata"));
  EXPECT_EQ(worker->command,
            (std::vector<std::string>{"/bin/sh", "-c", "echo working; sleep 1000"}));
  EXPECT_FALSE(worker->sandboxed);  // platforms: linux: {sandbox: false}
  // An unsandboxed consumer runs on the host's network: it reaches db through its host port.
  EXPECT_EQ(env_value(*worker, "DB"), "127.0.0.1:15433");
  EXPECT_EQ(env_value(*worker, "SCRATCH"),
            "/var/tmp/stackie-fixture-storage/volumes/full/worker/scratch");
  EXPECT_TRUE(web->sandboxed);
  EXPECT_EQ(env_value(*web, "MESSAGE"), "hello world");
  EXPECT_EQ(env_value(*web, "DB_PORT"), "5434");
  EXPECT_EQ(web->health.kind, HealthCheck::Kind::tcp);
  EXPECT_EQ(web->health.port, 9000);
  EXPECT_EQ(web->health.interval, Milliseconds(500));
  EXPECT_EQ(web->health.start_period, Milliseconds(60000));
  EXPECT_EQ(web->health.retries, 5);
  // limits: the definition's, then the stack's field by field, then the defaults.
  EXPECT_EQ(db->policy.limits, (ResourceLimits{256ull << 20, 100, 0, 64ull << 20, true}));
  EXPECT_EQ(web->policy.limits, (ResourceLimits{512ull << 20, 1024, 1500, 16ull << 20, true}));
  EXPECT_EQ(worker->policy.limits, default_limits());
  EXPECT_EQ(worker->policy.limits, (ResourceLimits{2ull << 30, 1024, 0, 64ull << 20, false}));

  options.os = "macos";
  auto on_macos = load_stack(options);
  ASSERT_TRUE(on_macos.ok()) << on_macos.error().message;
  EXPECT_TRUE(find_block(*on_macos, "worker")->sandboxed);
  // macOS has no network namespace: a localhost block listens on its host port itself, and
  // its policy names the only loopback ports it may bind and reach (issue 19).
  const ResolvedBlock* mac_db = find_block(*on_macos, "fixture.db");
  const ResolvedBlock* mac_web = find_block(*on_macos, "web");
  EXPECT_EQ(mac_db->serves[0].port, 15433);
  EXPECT_EQ(mac_db->policy.tcp_bind, std::vector<int>{15433});
  EXPECT_EQ(mac_web->policy.tcp_bind, (std::vector<int>{5433, 9000}));
  EXPECT_EQ(mac_web->policy.tcp_connect, std::vector<int>{15433});
  EXPECT_EQ(env_value(*mac_web, "DB_PORT"), "15433");
  EXPECT_EQ(mac_web->health.port, 9000);
  EXPECT_TRUE(db->policy.tcp_bind.empty() && web->policy.tcp_connect.empty())
      << "Linux: the namespace and the forwarder confine the ports";
  options.no_sandbox = true;
  auto unsandboxed = load_stack(options);
  ASSERT_TRUE(unsandboxed.ok());
  // --no-sandbox reaches first-party blocks only; catalog blocks stay sandboxed (issue 8).
  bool saw_catalog_block = false;
  for (const auto& block : unsandboxed->blocks) {
    EXPECT_EQ(block.sandboxed, !block.first_party) << block.name;
    saw_catalog_block |= !block.first_party;
  }
  EXPECT_TRUE(saw_catalog_block) << "the fixture needs a catalog block to test this";

  options.file = fixtures() + "/good/empty_values.yml";
  options.no_sandbox = false;
  auto tiny = load_stack(options);
  ASSERT_TRUE(tiny.ok()) << tiny.error().message;
  EXPECT_EQ(tiny->blocks.size(), 2u);
}

// ---- host ports (DESIGN.md §6): asked of the daemon before any string is expanded ----------

constexpr char kPortsStack[] =
    "demo:\n"
    "PORTS_LINE"
    "  blocks:\n"
    "    db:\n"
    "      command: [sh]\n"
    "      serves: {sql: {port: 5432, type: sql}}\n"
    "    api:\n"
    "      command: [sh, -c, 'echo ${consumes.db.PORT} ${serves.http}']\n"
    "      serves: {http: 8080}\n"
    "      consumes: {db: db}\n"
    "      environment: {DB: '${consumes.db.HOST}:${consumes.db.PORT}'}\n"
    "    hostside:\n"
    "      command: [sh]\n"
    "      consumes: {db: db}\n"
    "      environment: {DB: '${consumes.db.HOST}:${consumes.db.PORT}'}\n"
    "      platforms: {linux: {sandbox: false}}\n";

std::string ports_stack(const std::string& ports_line) {
  std::string text = kPortsStack;
  text.replace(text.find("PORTS_LINE"), 10, ports_line);
  return text;
}

TEST(LoaderPorts, TheDaemonPicksHostPortsAndHostSideConsumersUseThem) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml", ports_stack(""));
  std::vector<HostPortRequest> asked;
  options.allocate_host_port = [&](const HostPortRequest& request) -> Result<HostPortGrant> {
    asked.push_back(request);
    return HostPortGrant{request.wanted + 1, "taken"};  // as if every declared port were taken
  };
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].block, "db");
  EXPECT_EQ(asked[0].port_name, "sql");
  EXPECT_EQ(asked[0].wanted, 5432);
  EXPECT_FALSE(asked[0].exact);
  EXPECT_EQ(asked[0].stack, "demo");
  const ResolvedBlock* db = find_block(*stack, "db");
  const ResolvedBlock* api = find_block(*stack, "api");
  const ResolvedBlock* hostside = find_block(*stack, "hostside");
  ASSERT_TRUE(db && api && hostside);
  EXPECT_EQ(db->serves[0].host_port, 5433);
  EXPECT_EQ(api->serves[0].host_port, 8081);
  // Inside its own namespace the consumer sees the provider's declared port, and its own.
  EXPECT_EQ(env_value(*api, "DB"), "127.0.0.1:5432");
  EXPECT_EQ(api->command.back(), "echo 5432 8080");
  // On the host's network only the host port reaches the provider.
  EXPECT_EQ(env_value(*hostside, "DB"), "127.0.0.1:5433");
  EXPECT_EQ(hostside->consumes[0].local_port, 5433);
}

// ${consumes.ALL}: what a proxy's definition reads to map the names a stack gives its routes.
TEST(LoaderPorts, ConsumesAllListsEveryEntryInOrderWithThePortsTheBlockReaches) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file =
      home.write("s.yml",
                 "demo:\n"
                 "  blocks:\n"
                 "    web: {command: [sh], serves: {http: {port: 8000}}}\n"
                 "    api: {command: [sh], serves: {http: {port: 8000, host_port: 9000}}}\n"
                 "    proxy:\n"
                 "      command: [sh]\n"
                 "      serves: {http: 8080}\n"
                 "      consumes: {site: web, backend: api}\n"
                 "      environment: {UP: '${consumes.ALL}'}\n"
                 "    hostside:\n"
                 "      command: [sh]\n"
                 "      consumes: {site: web, backend: api}\n"
                 "      environment: {UP: '${consumes.ALL}'}\n"
                 "      platforms: {linux: {sandbox: false}}\n"
                 "    alone: {command: [sh], environment: {UP: 'x${consumes.ALL}x'}}\n");
  options.allocate_host_port = [](const HostPortRequest& request) -> Result<HostPortGrant> {
    return HostPortGrant{request.block == "api" ? 9001 : request.wanted, ""};
  };
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock* proxy = find_block(*stack, "proxy");
  const ResolvedBlock* hostside = find_block(*stack, "hostside");
  const ResolvedBlock* alone = find_block(*stack, "alone");
  ASSERT_TRUE(proxy && hostside && alone);
  // Both providers declare 8000: inside, the second one is moved to the next free port.
  EXPECT_EQ(env_value(*proxy, "UP"), "site=127.0.0.1:8000 backend=127.0.0.1:8001");
  EXPECT_EQ(env_value(*hostside, "UP"), "site=127.0.0.1:8000 backend=127.0.0.1:9001");
  EXPECT_EQ(env_value(*alone, "UP"), "xx");
}

// The shipped stackie.nginx: the stack's routes and the ports of what it consumes reach the
// init through the environment; the config goes to the private runtime directory.
TEST(LoaderPorts, TheShippedNginxGetsTheRoutesAndItsUpstreams) {
  TempDir home;
  TempDir host;
  make_fake_host(host);
  host.program("usr/sbin/nginx");
  LoadOptions options = hermetic_options(home, host / "usr/bin");
  options.program_root = host.path();
  options.file = home.write("s.yml",
                            "shop:\n"
                            "  blocks:\n"
                            "    api: {command: [sh], serves: {http: {port: 8000}}}\n"
                            "    web: {command: [sh], serves: {http: {port: 5173}}}\n"
                            "    stackie.nginx:\n"
                            "      consumes: {api: api, web: web}\n"
                            "      vars: {routes: '/api/ -> api, / -> web'}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock* nginx = find_block(*stack, "stackie.nginx");
  ASSERT_TRUE(nginx);
  EXPECT_EQ(env_value(*nginx, "NGINX_ROUTES"), "/api/ -> api, / -> web");
  EXPECT_EQ(env_value(*nginx, "NGINX_UPSTREAMS"), "api=127.0.0.1:8000 web=127.0.0.1:5173");
  std::string run = home / "stackie/storage/tmp/shop-nginx/run";
  ASSERT_EQ(nginx->command.size(), 5u);
  EXPECT_EQ(nginx->command.back(), run);
  EXPECT_NE(nginx->command[2].find("exec nginx -p"), std::string::npos);
  // nginx's directory comes first on the block's PATH: the `exec nginx` of the shell finds it.
  EXPECT_EQ(env_value(*nginx, "PATH").rfind(host / "usr/sbin:", 0), 0u);
  ASSERT_EQ(nginx->init.size(), 1u);
  EXPECT_EQ(nginx->init[0].run.back(), "8080");  // the port nginx.conf listens on
  EXPECT_EQ(nginx->init[0].run[nginx->init[0].run.size() - 2], run);
  EXPECT_EQ(nginx->stop_signal, SIGQUIT);
  EXPECT_EQ(nginx->health.kind, HealthCheck::Kind::tcp);
  EXPECT_EQ(nginx->health.port, 8080);
  EXPECT_EQ(nginx->policy.identity, Identity::user);
  EXPECT_EQ(nginx->depends_on, (std::vector<std::string>{"api", "web"}));
}

TEST(LoaderPorts, StrictStacksAskForExactPortsAndRefusalsCarryThePosition) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml", ports_stack("  ports: strict\n"));
  options.allocate_host_port = [](const HostPortRequest& request) -> Result<HostPortGrant> {
    if (!request.exact) return Error{-EINVAL, "not exact"};
    if (request.wanted == 5432) return Error{-EADDRINUSE, "host port 5432 is in use by pid 7"};
    return HostPortGrant{request.wanted, ""};
  };
  auto stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message, options.file + ":6:28: host port 5432 is in use by pid 7");
}

TEST(LoaderPorts, BlocksOnTheHostNetworkBindTheirOwnPortExactly) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml",
                            "demo:\n  blocks:\n    web:\n      command: [sh]\n"
                            "      serves: {http: {port: 8000, host_port: 9000}}\n"
                            "      platforms: {linux: {sandbox: false}}\n");
  auto stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message,
            options.file +
                ":5:29: 'serves.http' of 'web' runs on the host's network: host_port must equal "
                "port");
  options.file = home.write("t.yml",
                            "demo:\n  blocks:\n    web:\n      command: [sh]\n"
                            "      serves: {http: {port: 8000}}\n"
                            "      platforms: {linux: {sandbox: false}}\n");
  bool exact = false;
  options.allocate_host_port = [&](const HostPortRequest& request) -> Result<HostPortGrant> {
    exact = request.exact;
    return HostPortGrant{request.wanted, ""};
  };
  ASSERT_TRUE(load_stack(options).ok());
  EXPECT_TRUE(exact);
}

TEST(Loader, SettingsSupplyDefaults) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.settings.storage_root = "/srv/stackie";
  options.settings.default_restart = RestartPolicy::no;
  options.settings.no_sandbox = true;
  options.file = home.write("s.yml", "demo:\n  blocks:\n    a: {command: [sh]}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->storage_root, "/srv/stackie");
  EXPECT_EQ(stack->blocks[0].restart, RestartPolicy::no);
  EXPECT_FALSE(stack->blocks[0].sandboxed);
  EXPECT_EQ(stack->blocks[0].policy.host_tmp_dir, "/srv/stackie/tmp/demo-a");
}

TEST(Loader, SecretsFromTheEnvironmentWinAndVarsMayHoldThem) {
  TempDir home;
  home.write(".env", "TOKEN=from-dotenv\n");
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml",
                            "demo:\n  blocks:\n    a:\n      command: [sh, -c, 'x']\n"
                            "      vars: {auth: 'Bearer ${secrets.TOKEN}'}\n"
                            "      environment: {AUTH: '${vars.auth}', PLAIN: x}\n");
  auto from_file = load_stack(options);
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  EXPECT_EQ(env_value(from_file->blocks[0], "AUTH"), "Bearer from-dotenv");
  EXPECT_EQ(from_file->blocks[0].secret_names, (std::vector<std::string>{"AUTH"}));
  options.env["TOKEN"] = "from-env";
  EXPECT_EQ(env_value(load_stack(options)->blocks[0], "AUTH"), "Bearer from-env");
}

// A definition from someone else's catalog reads only the secrets its stack entry lists: the
// environment of `up` holds the user's agent socket, HOME and cloud keys.
TEST(Loader, ADefinitionReadsOnlyTheSecretsItsBlockIsGiven) {
  TempDir home;
  home.write("app/.env", "FILE_TOKEN=from-dotenv\n");
  LoadOptions options = hermetic_options(home);
  options.env["SSH_AUTH_SOCK"] = "/srv/agent.sock";  // in the home, no definition gets it at all
  options.env["AWS_SECRET_ACCESS_KEY"] = "cloud-key";
  home.write("app/defs/third.svc.yml",
             "third.svc:\n  programs:\n    sh: {packages: {apt: dash}}\n"
             "  command: [sh, -c, 'x']\n"
             "  environment: {KEY: '${secrets.AWS_SECRET_ACCESS_KEY}'}\n"
             "  sandbox:\n    read_only: ['${secrets.SSH_AUTH_SOCK}']\n");
  auto load = [&](const std::string& entry) {
    options.file = home.write("app/stackie.yml",
                              "demo:\n  sources: [./defs]\n  blocks:\n    svc: " + entry + "\n");
    return load_stack(options);
  };
  const std::string definition = home / "app/defs/third.svc.yml";
  auto unasked = load("{catalog: third.svc}");
  ASSERT_FALSE(unasked.ok());
  EXPECT_EQ(
      unasked.error().message,
      definition +
          ":5:23: block 'svc': its definition reads secret 'AWS_SECRET_ACCESS_KEY', which the "
          "stack does not give it; if it may have it, add AWS_SECRET_ACCESS_KEY to the "
          "block's 'secrets' list (" +
          home / "app/stackie.yml" + ":4:5)");
  // Each name on its own: one listed does not open the other.
  auto one = load("{catalog: third.svc, secrets: [AWS_SECRET_ACCESS_KEY]}");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().message.find(definition + ":7:18: block 'svc': its definition reads "
                                                  "secret 'SSH_AUTH_SOCK'"),
            0u)
      << one.error().message;
  auto both = load("{catalog: third.svc, secrets: [AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK]}");
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(env_value(both->blocks[0], "KEY"), "cloud-key");
  EXPECT_TRUE(has_bind(both->blocks[0].policy.read_only, "/srv/agent.sock"));
  // The stack's own text reads any, and what it gives a definition's var is the stack's.
  home.write("app/defs/third.svc.yml",
             "third.svc:\n  vars: {key: none}\n  programs:\n    sh: {packages: {apt: dash}}\n"
             "  command: [sh, -c, 'x']\n  environment: {KEY: '${vars.key}'}\n");
  auto given = load("{catalog: third.svc, vars: {key: '${secrets.FILE_TOKEN}'}}");
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_EQ(env_value(given->blocks[0], "KEY"), "from-dotenv");
  // A definition's var default is the definition's text: listed or refused, like the rest.
  home.write("app/defs/third.svc.yml",
             "third.svc:\n  vars: {key: '${secrets.FILE_TOKEN}'}\n  programs:\n"
             "    sh: {packages: {apt: dash}}\n"
             "  command: [sh, -c, 'x']\n  environment: {KEY: '${vars.key}'}\n");
  auto defaulted = load("{catalog: third.svc}");
  ASSERT_FALSE(defaulted.ok());
  EXPECT_EQ(defaulted.error().message.find(definition + ":2:16: block 'svc': its definition reads "
                                                        "secret 'FILE_TOKEN'"),
            0u)
      << defaulted.error().message;
  // Stackie's own catalog is not someone else's: its postgres reads POSTGRES_PASSWORD.
  options.env["POSTGRES_PASSWORD"] = "pg-secret";
  TempDir root;
  make_fake_host(root);
  options.program_root = root.path();
  auto shipped = load("{catalog: stackie.postgres}");
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  // The same file outside the shipped catalog is a definition like any other.
  options.shipped_block_path = {};
  auto elsewhere = load("{catalog: stackie.postgres}");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.error().message.find("its definition reads secret 'POSTGRES_PASSWORD'"),
            std::string::npos)
      << elsewhere.error().message;
  // A block of the stack's own has no definition to list secrets for.
  auto own = load("{command: [sh, -c, x], secrets: [X]}");
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.error().message.find(home / "app/stackie.yml:4:43: 'secrets' lists what a "
                                            "block's definition may read"),
            0u)
      << own.error().message;
  auto bad_name = load("{catalog: third.svc, secrets: [A.B]}");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.error().message,
            home /
                "app/stackie.yml:4:42: invalid secret name 'A.B' (letters, digits, '_', '-', "
                "as in ${secrets.NAME})");
}

// What the next load would read if it existed, where a block can write it: the daemon refuses
// one made while the block ran (supervisor/stack_neighbours.h).
TEST(Loader, SaysWhichDecisiveFilesAreAbsentWhereABlockCanWrite) {
  TempDir home;
  home.write("app/.dev.vars", "X=1\n");
  LoadOptions options = hermetic_options(home);
  options.file = home.write("app/s.yml",
                            "demo:\n  blocks:\n"
                            "    a: {path: ., command: [sh, -c, x], env_file: [{path: local.env, "
                            "required: false}]}\n"
                            "    b: {path: /srv, command: [sh, -c, x]}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  std::vector<std::string> absent;
  for (const auto& path : stack->absent_decisive) {
    EXPECT_EQ(path.dir.writer, "a") << path.path;
    absent.push_back(path.path);
  }
  std::sort(absent.begin(), absent.end());
  EXPECT_EQ(absent, (std::vector<std::string>{home / "app/.env", home / "app/local.env",
                                              home / "app/s.secrets.yml"}))
      << ".dev.vars exists (and is shown read-only); nothing below /srv is decisive";
  // Where the sandbox can say so (Seatbelt), the block may not make them.
  const auto& no_create = stack->blocks.at(0).policy.no_create;
  for (const char* missing : {"app/.env", "app/.git", "app/s.secrets.yml", "app/local.env"})
    EXPECT_NE(std::find(no_create.begin(), no_create.end(), home / missing), no_create.end())
        << missing;
  EXPECT_EQ(std::find(no_create.begin(), no_create.end(), home / "app/.dev.vars"), no_create.end())
      << "it exists: bound read-only";

  // A substack found by its directory as stackie.yml: stackie-stack.yml there would be taken.
  home.write("app/billing/stackie.yml", "billing:\n  blocks:\n    bill: {command: [sh, -c, x]}\n");
  options.file = home.write("app/s.yml",
                            "demo:\n  stacks: [./billing]\n  blocks:\n"
                            "    a: {path: ., command: [sh, -c, x]}\n");
  auto with_substack = load_stack(options);
  ASSERT_TRUE(with_substack.ok()) << with_substack.error().message;
  absent.clear();
  for (const auto& path : with_substack->absent_decisive) absent.push_back(path.path);
  for (const char* earlier : {"app/billing/stackie-stack.yml", "app/billing/stackie-stack.yaml"})
    EXPECT_NE(std::find(absent.begin(), absent.end(), home / earlier), absent.end()) << earlier;
  EXPECT_EQ(std::find(absent.begin(), absent.end(), home / "app/billing/stackie.yaml"),
            absent.end())
      << "a name after the one found is never taken";
}

// Issue 14: what a restore needs of the environment, and what is worth a warning.
TEST(Loader, RecordsTheEnvironmentItUsedAndWarnsAboutSecretsInArgvAndOpenSecretFiles) {
  TempDir home;
  std::string dotenv = home.write(".env", "FILE_TOKEN=from-dotenv\n");
  ::chmod(dotenv.c_str(), 0644);
  LoadOptions options = hermetic_options(home);
  options.env["ENV_TOKEN"] = "from-env";
  options.env["UNRELATED_TOKEN"] = "never-read";
  options.file = home.write("s.yml",
                            "demo:\n  blocks:\n    a:\n"
                            "      command: [sh, -c, 'x', '${secrets.ENV_TOKEN}']\n"
                            "      environment: {F: '${secrets.FILE_TOKEN}'}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->env_referenced, (std::vector<std::string>{"PATH", "HOME", "ENV_TOKEN"}));
  ASSERT_EQ(stack->warnings.size(), 2u);
  EXPECT_EQ(stack->warnings[0],
            options.file +
                ":4:30: warning: block 'a' puts a secret on a command line, where every user's "
                "`ps` shows it; pass it through 'environment' instead");
  EXPECT_EQ(stack->warnings[1], dotenv +
                                    ": warning: this secrets file has mode 0644: other users of "
                                    "this machine may read it (chmod 600 " +
                                    dotenv + ")");
  ::chmod(dotenv.c_str(), 0600);
  auto quiet = load_stack(options);
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ(quiet->warnings.size(), 1u) << "a private secrets file is no warning";
}

// Issue 14: a first-party block's own directory is writable, except what decides the next `up`.
TEST(Loader, TheProjectBindShowsTheStackFileSecretsAndGitReadOnly) {
  TempDir home;
  home.write("app/.env", "A=1\n");
  home.write("app/.dev.vars", "B=2\n");
  home.write("app/.git/HEAD", "ref: refs/heads/main\n");
  home.write("app/s.secrets.yml", "secrets: {C: three}\n");
  LoadOptions options = hermetic_options(home);
  options.file = home.write("app/s.yml",
                            "demo:\n  blocks:\n    a:\n      path: .\n"
                            "      command: [sh, -c, 'x']\n");
  std::filesystem::create_symlink("/etc/hostname", home / "app/.gitconfig-link");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const auto& policy = stack->blocks[0].policy;
  std::string app = home / "app";
  EXPECT_TRUE(has_bind(policy.read_write, app));
  for (const char* name : {"s.yml", "s.secrets.yml", ".env", ".dev.vars", ".git"})
    EXPECT_TRUE(has_bind(policy.read_only, app + "/" + name)) << name;
  EXPECT_EQ(policy.storage_root, home / "stackie/storage");

  // A block elsewhere does not see the stack's directory: nothing to protect there.
  options.file = home.write("s2.yml",
                            "demo:\n  blocks:\n    a:\n      path: app\n"
                            "      command: [sh, -c, 'x']\n");
  auto other = load_stack(options);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_FALSE(has_bind(other->blocks[0].policy.read_only, home / "s2.yml"));
  EXPECT_TRUE(has_bind(other->blocks[0].policy.read_only, app + "/.env"));
}

// The same below a host volume the block writes (compose's `.:/app`, which wrote the stack file
// before), at the place the volume is shown; a decisive file given to write as a whole is
// refused.
TEST(Loader, AVolumeThatHoldsTheStackFileShowsItReadOnly) {
  TempDir home;
  home.write("app/.env", "A=1\n");
  home.write("app/defs/x.yml", "# the project's definitions\n");
  LoadOptions options = hermetic_options(home);
  const std::string app = home / "app";
  auto load = [&](const std::string& volume) {
    options.file = home.write("app/s.yml",
                              "demo:\n  sources: [./defs]\n  blocks:\n    a:\n"
                              "      command: [sh, -c, 'x']\n"
                              "      volumes: [\"" +
                                  volume + "\"]\n");
    return load_stack(options);
  };
  auto at_its_path = load(".:/app");
  ASSERT_TRUE(at_its_path.ok()) << at_its_path.error().message;
  const SandboxPolicy& policy = at_its_path->blocks[0].policy;
  EXPECT_TRUE(has_bind(policy.read_write, app));
  for (const char* name : {"s.yml", ".env", "defs"})
    EXPECT_TRUE(has_bind(policy.read_only, app + "/" + name)) << name;

  // Shown elsewhere (paths:), the protection is where the block sees it.
  options.file = home.write("app/s.yml",
                            "demo:\n  blocks:\n    a:\n      command: [sh, -c, 'x']\n"
                            "      volumes: ['.:/src']\n      paths: {src: /src}\n");
  auto elsewhere = load_stack(options);
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.error().message;
  auto shown_at = [&](const std::vector<BindMount>& binds, const std::string& source,
                      const std::string& dest) {
    return std::any_of(binds.begin(), binds.end(), [&](const BindMount& bind) {
      return bind.source == source && bind.dest == dest;
    });
  };
  const SandboxPolicy& moved = elsewhere->blocks[0].policy;
  EXPECT_TRUE(shown_at(moved.read_write, app, "/src"));
  EXPECT_TRUE(shown_at(moved.read_only, app + "/s.yml", "/src/s.yml"));
  EXPECT_TRUE(shown_at(moved.read_only, app + "/.env", "/src/.env"));

  // Named through a link to the project: protected under that spelling, where the block sees it.
  std::filesystem::create_directory_symlink(app, home / "app-link");
  auto through_a_link = load(home / "app-link" + ":/app");
  ASSERT_TRUE(through_a_link.ok()) << through_a_link.error().message;
  EXPECT_TRUE(has_bind(through_a_link->blocks[0].policy.read_only, home / "app-link/s.yml"));

  auto whole = load("./defs:/defs");
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().message, options.file + ":4:5: block 'a' would be given " + app +
                                       "/defs to write, which decides how the next up runs: "
                                       "give it read-only (:ro), or a directory below it");
  EXPECT_TRUE(load("./defs:/defs:ro").ok());
}

// A catalog directory (STACKIE_BLOCK_PATH) in the project: a block that writes the project
// could rewrite a definition, or add one that takes a name's place, and choose that block's
// sandbox at the next up. Read-only to it, and recorded as deciding how the stack runs.
TEST(Loader, ACatalogDirectoryABlockCanWriteIsReadOnlyToIt) {
  TempDir home;
  home.write("app/catalog/mine.svc.yml",
             "mine.svc:\n  programs:\n    sh: {packages: {apt: dash}}\n"
             "  command: [sh, -c, 'x']\n");
  LoadOptions options = hermetic_options(home);
  options.block_path.insert(options.block_path.begin(), home / "app/catalog");
  options.file = home.write("app/s.yml",
                            "demo:\n  blocks:\n    a:\n      path: .\n"
                            "      command: [sh, -c, 'x']\n    b: {catalog: mine.svc}\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_TRUE(has_bind(stack->blocks[0].policy.read_only, home / "app/catalog"));
  EXPECT_TRUE(has_bind(stack->blocks[0].policy.read_only, home / "app/s.yml"));
  // Below the project, which is recorded (stack_neighbours.h); one elsewhere is recorded itself.
  EXPECT_TRUE(std::any_of(stack->decisive_paths.begin(), stack->decisive_paths.end(),
                          [&](const std::string& path) { return path == home / "app"; }));
  // And every decisive file the load read, wherever it is (compared with what blocks made).
  for (const std::string& read : {home / "app/s.yml", home / "app/catalog"})
    EXPECT_NE(std::find(stack->decisive_files.begin(), stack->decisive_files.end(), read),
              stack->decisive_files.end())
        << read;
  home.write("elsewhere/other.svc.yml", "# none\n");
  options.block_path.push_back(home / "elsewhere");
  auto more = load_stack(options);
  ASSERT_TRUE(more.ok()) << more.error().message;
  EXPECT_TRUE(std::any_of(more->decisive_paths.begin(), more->decisive_paths.end(),
                          [&](const std::string& path) { return path == home / "elsewhere"; }))
      << "or another stack's block could write it unnoticed";
}

// Another block's env file decides how that block runs (LD_PRELOAD, PATH, its secrets): read-only
// to a block that writes where it is, also when the other block's profile is not selected now.
TEST(Loader, AnotherBlocksEnvFileIsReadOnlyToABlockThatWritesThere) {
  TempDir home;
  home.write("app/caddy.env", "X=1\n");
  LoadOptions options = hermetic_options(home);
  options.file = home.write("app/s.yml",
                            "demo:\n  blocks:\n    a:\n      path: .\n"
                            "      command: [sh, -c, 'x']\n"
                            "    b:\n      profiles: [web]\n      env_file: ./caddy.env\n"
                            "      command: [sh, -c, 'x']\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  ASSERT_EQ(stack->blocks.size(), 1u) << "b's profile is not selected";
  EXPECT_TRUE(has_bind(stack->blocks[0].policy.read_only, home / "app/caddy.env"));
}

// A sandboxed block given a directory that holds STACKIE_HOME or the storage root could rewrite
// the daemon's state and read its API token, and every other block's volumes and logs: refused,
// at the `path:` that asks for it. Unsandboxed (--no-sandbox), it writes there anyway.
TEST(Loader, NoBlockIsGivenTheStorageOrStackiesHomeToWrite) {
  TempDir home;
  LoadOptions options = hermetic_options(home);  // STACKIE_HOME is HOME/stackie
  options.file = home.write("s.yml",
                            "demo:\n  blocks:\n    a:\n      path: .\n"
                            "      command: [sh, -c, 'x']\n");
  auto in_home = load_stack(options);
  ASSERT_FALSE(in_home.ok());
  EXPECT_EQ(in_home.error().message,
            home / "s.yml" + ":4:13: block 'a' would be given " + home.path() +
                " to write, which holds its storage root " + home / "stackie/storage" +
                " (every block's volumes, logs and /tmp): keep the project in a "
                "directory of its own, or move the storage (storage_root, STACKIE_HOME)");
  options.no_sandbox = true;
  EXPECT_TRUE(load_stack(options).ok());
  options.no_sandbox = false;

  // The message of loading `yaml` as `file` ("" when it loaded), and a block with one volume.
  auto refusal = [&](const std::string& file, const std::string& yaml) {
    options.file = home.write(file, yaml);
    auto stack = load_stack(options);
    return stack.ok() ? std::string() : stack.error().message;
  };
  auto with_volume = [](const std::string& volume) {
    return "demo:\n  blocks:\n    a:\n      command: [sh, -c, 'x']\n      volumes: {" + volume +
           "}\n";
  };
  auto says = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };

  // A storage root inside the project, and a volume on a directory above STACKIE_HOME.
  EXPECT_TRUE(says(refusal("app/s.yml", "demo:\n  storage_root: " + home / "app/data" +
                                            "\n  blocks:\n    a:\n      path: .\n"
                                            "      command: [sh, -c, 'x']\n"),
                   "to write, which holds its storage root " + home / "app/data"));
  EXPECT_TRUE(says(refusal("app/v.yml", with_volume("all: " + home.path())),
                   "to write, which holds its storage root"));

  // Through a link: a project directory that leads to the home (a repository can ship the
  // link; a block can plant one in its project for the next up).
  std::filesystem::create_symlink(home.path(), home / "app/h");
  EXPECT_TRUE(says(refusal("app/l.yml",
                           "demo:\n  blocks:\n    a:\n      path: ./h\n"
                           "      command: [sh, -c, 'x']\n"),
                   "would be given " + home / "app/h" + " to write"));

  // Read-only too, for STACKIE_HOME (its API token) and the socket's directory, not the storage.
  EXPECT_TRUE(
      says(refusal("app/r.yml", with_volume("all: {host: " + home.path() + ", read_only: true}")),
           " to read, which holds stackie's home (STACKIE_HOME) " + home / "stackie"));
  options.env["XDG_RUNTIME_DIR"] = home / "runtime";
  EXPECT_TRUE(says(
      refusal("app/s2.yml", with_volume("rt: {host: " + home / "runtime" + ", read_only: true}")),
      "which holds the daemon's socket directory " + home / "runtime/stackie"));
  // Inside them: the API token, the socket itself.
  EXPECT_TRUE(says(refusal("app/s4.yml", with_volume("tk: {host: " + home / "stackie/keys" +
                                                     ", read_only: true}")),
                   " to read, which is in stackie's home (STACKIE_HOME) " + home / "stackie"));
  EXPECT_TRUE(
      says(refusal("app/s5.yml", with_volume("sk: " + home / "runtime/stackie/x")),
           " to write, which is in the daemon's socket directory " + home / "runtime/stackie"));
  options.env.erase("XDG_RUNTIME_DIR");
  EXPECT_EQ(refusal("app/s3.yml",
                    with_volume("st: {host: " + home / "stackie/storage/x" + ", read_only: true}")),
            "")
      << "read-only below the storage root is the user's to give";

  // The project beside them, as usual: loads.
  options.file = home.write("app/ok.yml",
                            "demo:\n  blocks:\n    a:\n      path: .\n"
                            "      command: [sh, -c, 'x']\n");
  auto beside = load_stack(options);
  EXPECT_TRUE(beside.ok()) << beside.error().message;
}

// A block with `path: .` writes the project; what a neighbour is given below it, and what
// decides how the stack runs, is never reached through a link there (writable_dirs.h): the block
// may have planted it. Each case was a way out before: ./conf -> the user's files bound into the
// reader, ./defs -> a directory of the block's own definitions, .venv/bin/jq -> a tool in a
// private directory, whose whole directory was shown.
TEST(Loader, ALinkWhereABlockCanWriteIsNeverFollowed) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  home.write("private/secret", "s");
  home.write("app/conf/x", "c");
  std::filesystem::create_symlink(home / "private", home / "app/link");
  const std::string planter = "    planter:\n      path: .\n      command: [sh, -c, 'x']\n";
  auto load = [&](const std::string& yaml) {
    options.file = home.write("app/stackie.yml", yaml);
    return load_stack(options);
  };

  auto volume = load("demo:\n  blocks:\n" + planter +
                     "    reader:\n      command: [sh, -c, 'x']\n"
                     "      volumes:\n        - ./link:/etc/app:ro\n");
  ASSERT_FALSE(volume.ok());
  EXPECT_EQ(volume.error().message,
            options.file + ":6:5: block 'reader' would be given " + home / "app/link" +
                " through the symbolic link " + home / "app/link" + ", in " + home / "app" +
                ", which block 'planter' can write: a link there is never followed (a block may "
                "have planted it); if you made it, name the path it points to instead");
  // The same from a block this `up` does not start: it may have written there before.
  options.profiles = {};
  auto profiled = load(
      "demo:\n  blocks:\n    planter:\n      path: .\n      profiles: [dev]\n"
      "      command: [sh, -c, 'x']\n"
      "    reader:\n      command: [sh, -c, 'x']\n"
      "      volumes:\n        - ./link:/etc/app:ro\n");
  ASSERT_FALSE(profiled.ok());
  EXPECT_NE(profiled.error().message.find("which block 'planter' can write"), std::string::npos)
      << profiled.error().message;
  // A real directory there is given, and every sandboxed block is told where links are refused.
  auto real = load("demo:\n  blocks:\n" + planter +
                   "    reader:\n      command: [sh, -c, 'x']\n"
                   "      volumes:\n        - ./conf:/etc/app:ro\n");
  ASSERT_TRUE(real.ok()) << real.error().message;
  for (const auto& block : real->blocks)
    EXPECT_EQ(block.policy.link_free_roots, std::vector<std::string>{home / "app"}) << block.name;

  // A `sources:` directory that is a link: the block could swap it for its own definitions.
  auto sources = load("demo:\n  sources: [./link]\n  blocks:\n" + planter);
  ASSERT_FALSE(sources.ok());
  EXPECT_EQ(sources.error().message,
            options.file + ":2:13: " + home / "app/link" +
                " is reached through the symbolic link " + home / "app/link" + ", in " +
                home / "app" +
                ", which block 'planter' can write: it could swap the link for one of its own and "
                "decide how the next up runs; put the file or directory itself in place of the "
                "link");
  // A real one is shown read-only to the block that writes the project.
  home.write("app/defs/.keep", "");
  auto protected_sources = load("demo:\n  sources: [./defs]\n  blocks:\n" + planter);
  ASSERT_TRUE(protected_sources.ok()) << protected_sources.error().message;
  EXPECT_TRUE(has_bind(protected_sources->blocks[0].policy.read_only, home / "app/defs"));

  // A tool found on PATH in the project, a link to a private directory: nothing of what it
  // names is shown (the block's own view decides whether it runs).
  home.program("private/tool");
  std::filesystem::create_directories(home / "app/.venv/bin");
  std::filesystem::create_symlink(home / "private/tool", home / "app/.venv/bin/tool");
  options.env["PATH"] = home / "app/.venv/bin" + ":/usr/bin:/bin";
  auto tool =
      load("demo:\n  blocks:\n" + planter +
           "    planter2:\n      path: .\n      command: [sh, -c, 'x']\n      tools: [tool]\n");
  ASSERT_FALSE(tool.ok()) << "the tool is not in the block's view";
  EXPECT_NE(tool.error().message.find("tool"), std::string::npos) << tool.error().message;
  EXPECT_EQ(tool.error().message.find(home / "private"), std::string::npos)
      << "nothing of the link's target is shown: " << tool.error().message;
  // And a block that cannot write there does not look there at all: a program planted in
  // another block's directory would run in this block's sandbox.
  auto other = load("demo:\n  blocks:\n" + planter +
                    "    user:\n      command: [sh, -c, 'x']\n      tools: [tool]\n");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("tool 'tool' not found"), std::string::npos)
      << other.error().message;
}

// A definition may come from someone else's catalog: its sandbox grants reach into stackie's
// storage only for the block's own volumes and runtime paths, never its neighbours' (a `..`
// out of its own volume was every block's volumes and logs).
TEST(Loader, ADefinitionIsGivenNothingOfStorageButItsOwn) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("app/stackie.yml",
                            "demo:\n  sources: [./defs]\n  blocks:\n"
                            "    svc: {catalog: third.svc}\n    db: {command: [sh, -c, x]}\n");
  auto load_with_grant = [&](const std::string& grant) {
    home.write("app/defs/third.svc.yml",
               "third.svc:\n  paths:\n    data: {volume: data}\n    run: {runtime: run}\n"
               "  programs:\n    sh: {packages: {apt: dash}}\n"
               "  command: [sh, -c, 'x']\n"
               "  sandbox:\n    read_write: [\"" +
                   grant + "\"]\n");
    return load_stack(options);
  };
  for (const std::string own : {"${paths.data}", "${paths.data}/sub", "${paths.run}/x"}) {
    auto loaded = load_with_grant(own);
    EXPECT_TRUE(loaded.ok()) << own << ": " << loaded.error().message;
  }
  auto up = load_with_grant("${paths.data}/../..");
  ASSERT_FALSE(up.ok());
  EXPECT_EQ(up.error().message.find(home / "app/defs/third.svc.yml:9:18: sandbox.read_write '"), 0u)
      << up.error().message;
  EXPECT_NE(up.error().message.find("a '..' is not allowed here"), std::string::npos)
      << up.error().message;
  // Spelled out, the neighbour's temp dir and the whole storage are refused the same.
  auto own = load_with_grant("${paths.data}");
  ASSERT_TRUE(own.ok()) << own.error().message;
  const std::string root = own->blocks.at(0).policy.storage_root;
  ASSERT_FALSE(root.empty());
  for (const std::string& other : {root, root + "/logs", root + "/tmp/demo-db"}) {
    auto loaded = load_with_grant(other);
    ASSERT_FALSE(loaded.ok()) << other;
    EXPECT_NE(loaded.error().message.find("' is in stackie's storage (" + root +
                                          "): a definition is given only the block's own"),
              std::string::npos)
        << loaded.error().message;
  }
  // A directory that holds the storage shows every block's volumes, read-only too.
  auto above = load_with_grant(home / "stackie");
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.error().message.find("' holds stackie's storage (" + root + ")"),
            std::string::npos)
      << above.error().message;
  // A descriptor of the launcher's (its storage root), which no path check sees through.
  for (const char* magic : {"/proc/self/fd/5", "/dev/fd/5", "/proc/1/root"}) {
    auto loaded = load_with_grant(magic);
    ASSERT_FALSE(loaded.ok()) << magic;
    EXPECT_NE(loaded.error().message.find("is not given to a definition"), std::string::npos)
        << loaded.error().message;
  }
  // The daemon's home and socket, which a definition could name through ${secrets.HOME}: the
  // API token, state.json, and a socket that ups anything without a sandbox. (Here not in the
  // user's home, which no definition is given either: ADefinitionIsGivenNoneOfTheUsersPlaces.)
  options.env["HOME"] = "/nonexistent-home";
  options.env["XDG_RUNTIME_DIR"] = home / "run";
  // The daemon's own socket, also when the environment (a restore's) does not say where it is.
  options.daemon_socket = home / "xdg/stackie/stackied.sock";
  for (const std::string& daemons :
       {home / "stackie/api.token", home / "stackie/state.json", home / "run/stackie/stackied.sock",
        home / "xdg/stackie/stackied.sock"}) {
    auto loaded = load_with_grant(daemons);
    ASSERT_FALSE(loaded.ok()) << daemons;
    // Here the temp or runtime directory, which no definition is given either
    // (ADefinitionIsGivenNoneOfTheUsersPlaces); a stack's volume there: ...NotInTheDaemonsHome.
    const std::string& message = loaded.error().message;
    EXPECT_TRUE(message.find("would be given " + daemons + " to write, which is in ") !=
                    std::string::npos ||
                message.find("sandbox.read_write '" + daemons + "' is in ") != std::string::npos)
        << message;
  }
}

// A definition's grants are the system's paths (/usr/share/x, /etc/ssl): the user's home (keys,
// every project), runtime directory (agent sockets), /tmp (ssh-agent's) and the project are
// the stack's to give, as volumes. Without this, `read_only: [/home]` read every key.
TEST(Loader, ADefinitionIsGivenNoneOfTheUsersPlaces) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.env["HOME"] = home / "users/alice";
  options.env["XDG_RUNTIME_DIR"] = home / "run/user/1000";
  options.file = home.write(
      "app/stackie.yml", "demo:\n  sources: [./defs]\n  blocks:\n    svc: {catalog: third.svc}\n");
  auto load_with_grant = [&](const std::string& list, const std::string& grant) {
    home.write("app/defs/third.svc.yml",
               "third.svc:\n  paths:\n    data: {volume: data}\n"
               "  programs:\n    sh: {packages: {apt: dash}}\n"
               "  command: [sh, -c, 'x']\n"
               "  sandbox:\n    " +
                   list + ": [\"" + grant + "\"]\n");
    return load_stack(options);
  };
  const std::string definition = home / "app/defs/third.svc.yml";
  struct Case {
    std::string grant, says;
  };
  const std::vector<Case> refused = {
      {home / "users/alice/.ssh", "' is in your home directory (" + home / "users/alice" + ")"},
      {home / "users", "' holds your home directory (" + home / "users/alice" + ")"},
      {home / "run/user", "' holds your runtime directory (" + home / "run/user/1000" + ")"},
      {"/tmp/ssh-XXXX/agent.1", "' is in the temp directory (/tmp)"},
      {home / "app/src", "' is in the project (" + home / "app" + ")"},
  };
  for (const char* list : {"read_only", "read_write"})
    for (const auto& [grant, says] : refused) {
      auto loaded = load_with_grant(list, grant);
      ASSERT_FALSE(loaded.ok()) << list << " " << grant;
      EXPECT_EQ(loaded.error().message.find(definition + ":8:"), 0u) << loaded.error().message;
      EXPECT_NE(loaded.error().message.find(std::string(list) + " '" + grant + says +
                                            ": a definition is given the system's paths; the "
                                            "stack gives the block yours (volumes)"),
                std::string::npos)
          << loaded.error().message;
    }
  // "/" holds them all (and the storage, which is said first).
  for (const char* list : {"read_only", "read_write"})
    EXPECT_FALSE(load_with_grant(list, "/").ok()) << list;
  // Through a link to the home, the same.
  std::filesystem::create_directories(home / "users/alice/.ssh");
  ASSERT_EQ(::symlink((home / "users/alice").c_str(), (home / "alias").c_str()), 0);
  auto linked = load_with_grant("read_only", home / "alias/.ssh");
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.error().message.find("is in your home directory"), std::string::npos)
      << linked.error().message;
  // The system's paths and the block's own storage (below the home here) are given.
  for (const char* given : {"/usr/share/zoneinfo", "/etc/ssl", "${paths.data}"}) {
    auto loaded = load_with_grant("read_only", given);
    EXPECT_TRUE(loaded.ok()) << given << ": " << loaded.error().message;
  }
  // The system's sockets (docker's, the bus's) and the user's drives.
  for (const char* system_place : {"/run/docker.sock", "/var/run/docker.sock", "/run/dbus",
                                   "/media/usb", "/var/tmp/x", "/dev/shm/x"}) {
    auto loaded = load_with_grant("read_write", system_place);
    ASSERT_FALSE(loaded.ok()) << system_place;
    EXPECT_NE(loaded.error().message.find("a definition is given the system's paths"),
              std::string::npos)
        << loaded.error().message;
  }
  // A volume the stack gives read-only, outside those places: not written through a grant.
  options.file = home.write("app/stackie.yml",
                            "demo:\n  sources: [./defs]\n  blocks:\n"
                            "    svc: {catalog: third.svc, volumes: {ro: {host: /srv/data, "
                            "read_only: true}}}\n");
  auto ro = load_with_grant("read_write", "${paths.ro}/sub");
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.error().message.find("sandbox.read_write '/srv/data/sub' is in volume 'ro' "
                                    "(/srv/data), which the stack gives read-only"),
            std::string::npos)
      << ro.error().message;
  EXPECT_TRUE(load_with_grant("read_only", "${paths.ro}/sub").ok());
  // A HOME of "/" (a service account's) is no place: it would hold every path. Nor does an
  // environment without HOME (a restore's, the API's) hide the account's home.
  options.env["HOME"] = "/";
  auto system = load_with_grant("read_only", "/usr/share/zoneinfo");
  EXPECT_TRUE(system.ok()) << system.error().message;
  options.env.erase("HOME");
  const std::string account_home = account_home_dir();
  ASSERT_FALSE(account_home.empty());
  auto unnamed = load_with_grant("read_only", account_home + "/.ssh");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.error().message.find("is in your home directory (" + account_home + ")"),
            std::string::npos)
      << unnamed.error().message;
}

// A definition's `programs:` search globs name directories, which are shown to the block:
// `search: [/home/*/*]` showed a project (its .env) to someone else's definition.
TEST(Loader, ADefinitionsProgramSearchFindsNothingInTheUsersPlaces) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.env["HOME"] = home / "users/alice";
  home.program("users/alice/proj/manage.py");
  options.file = home.write(
      "app/stackie.yml", "demo:\n  sources: [./defs]\n  blocks:\n    svc: {catalog: third.svc}\n");
  home.write("app/defs/third.svc.yml",
             "third.svc:\n  programs:\n"
             "    peek: {names: [manage.py, sh], search: ['" +
                 home / "users/*/*" +
                 "']}\n"
                 "  command: [peek]\n");
  auto loaded = load_stack(options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(
      loaded.error().message.find(home / "app/defs/third.svc.yml:3:5: programs.peek found in '" +
                                  home / "users/alice/proj" + "' is in your home directory"),
      0u)
      << loaded.error().message;
  // Found on PATH (the user's choice), the same program is given.
  options.env["PATH"] = home / "users/alice/proj" + ":/usr/bin:/bin";
  home.write("app/defs/third.svc.yml",
             "third.svc:\n  programs:\n    peek: {names: [manage.py]}\n  command: [peek]\n");
  auto on_path = load_stack(options);
  EXPECT_TRUE(on_path.ok()) << on_path.error().message;
}

TEST(Loader, VarsThatReferToThemselvesAreErrors) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml",
                            "demo:\n  blocks:\n    a:\n      command: [sh]\n"
                            "      vars: {x: '${vars.y}', y: '${vars.x}'}\n"
                            "      environment: {X: '${vars.x}'}\n");
  auto stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message, options.file + ":5:34: var 'x' refers to itself in block 'a'");
}

TEST(Loader, RelativeBlockPathIsTakenFromTheCwd) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.cwd = fixtures();
  options.block_path = {"blocks"};
  options.file = "good/empty_values.yml";
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->file, fixtures() + "/good/empty_values.yml");
  EXPECT_EQ(stack->blocks[0].definition_file, fixtures() + "/blocks/fixture.cache.yml");
}

TEST(Loader, UserSettingsComeFromStackieHome) {
  TempDir home;
  home.write("config.toml", "no_sandbox = true\n[logs]\nmax_files = 2\n");
  auto settings = load_user_settings({{"STACKIE_HOME", home.path()}});
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_TRUE(settings->no_sandbox);
  EXPECT_EQ(settings->log_max_files, 2);
}

// ---- issue 16: what a developer meets in the first hour ----------------------------------------

TEST(LoaderDailyUse, DependsOnConditionsAndTheirDefault) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file =
      home.write("s.yml",
                 "demo:\n  blocks:\n    migrate: {command: [sh, -c, 'true'], restart: 'no'}\n"
                 "    db: {command: [sh]}\n    cache: {command: [sh]}\n"
                 "    app:\n      command: [sh]\n"
                 "      depends_on: {migrate: {condition: completed_successfully},\n"
                 "                   db: {condition: service_started}, cache: }\n");
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock* app = find_block(*stack, "app");
  ASSERT_TRUE(app);
  EXPECT_EQ(app->depends_on.size(), 3u);
  std::vector<std::pair<std::string, DependCondition>> expected = {
      {"migrate", DependCondition::completed_successfully}, {"db", DependCondition::started}};
  EXPECT_EQ(app->depend_conditions, expected) << "cache waits for healthy, the default";
  EXPECT_EQ(stack->blocks.back().name, "app") << "a condition still orders the start";
}

TEST(LoaderDailyUse, ProjectNameRenamesTheStackAndEverythingDerivedFromIt) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml", "demo:\n  blocks:\n    a: {command: [sh]}\n");
  options.project_name = "demo-two";
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->name, "demo-two");
  EXPECT_EQ(stack->blocks[0].sandbox_id, "demo--two-a");  // the stack's '-' doubled (paths.h)
  options.project_name = "Bad Name";
  auto bad = load_stack(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("--project-name: invalid project name 'Bad Name'", 0), 0u)
      << bad.error().message;
}

TEST(LoaderDailyUse, AMovedHostPortIsRecordedWithItsNote) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  options.file = home.write("s.yml", ports_stack(""));
  options.allocate_host_port = [](const HostPortRequest& request) -> Result<HostPortGrant> {
    if (request.block != "db") return HostPortGrant{request.wanted, ""};
    return HostPortGrant{request.wanted + 2, "5432 is taken by pid 812 (postgres); using 5434"};
  };
  auto stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  const ResolvedBlock* db = find_block(*stack, "db");
  const ResolvedBlock* api = find_block(*stack, "api");
  ASSERT_TRUE(db && api);
  ASSERT_EQ(db->moved_ports.size(), 1u);
  EXPECT_EQ(db->moved_ports[0],
            (MovedPort{"sql", 5432, 5434, "5432 is taken by pid 812 (postgres); using 5434"}));
  EXPECT_TRUE(api->moved_ports.empty());
}

TEST(LoaderDailyUse, CommandsAreCheckedInsideTheSandboxsView) {
  TempDir home;
  LoadOptions options = hermetic_options(home);
  home.write("app/serve.sh", "#!/bin/sh\n");  // not executable yet
  options.file = home.write("s.yml",
                            "demo:\n  blocks:\n    web:\n      path: app\n"
                            "      command: ./serve.sh --port 8000\n");
  auto stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_EQ(stack.error().message,
            options.file + ":5:16: block 'web': command not executable: ./serve.sh (" +
                home / "app/serve.sh" + "; chmod +x it or run it through its interpreter)");
  ASSERT_EQ(::chmod((home / "app/serve.sh").c_str(), 0755), 0);
  stack = load_stack(options);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->blocks[0].command_program, "./serve.sh");
  EXPECT_EQ(stack->blocks[0].command_where, "s.yml:5:16");
  // The stack's directory is not the block's: a program there is outside its view.
  home.program("outside.sh");
  options.file = home.write("t.yml",
                            "demo:\n  blocks:\n    web:\n      path: app\n"
                            "      command: ../outside.sh\n");
  stack = load_stack(options);
  ASSERT_FALSE(stack.ok());
  EXPECT_NE(stack.error().message.find("command outside the sandbox's view: ../outside.sh"),
            std::string::npos)
      << stack.error().message;
  // Unsandboxed, the host is the view.
  options.no_sandbox = true;
  EXPECT_TRUE(load_stack(options).ok());
}

TEST(LoaderDailyUse, ShellLinesAreCheckedOnlyWhenTheirProgramCanBeTold) {
  EXPECT_EQ(shell_program_word("./serve.sh --port 1"), "./serve.sh");
  size_t offset = 0;
  EXPECT_EQ(shell_program_word("  PORT=1 exec  redis-server x", &offset), "redis-server");
  EXPECT_EQ(offset, 15u);
  EXPECT_EQ(shell_program_word("cd app && ./serve.sh"), "");
  EXPECT_EQ(shell_program_word("\"$HOME/bin/x\""), "");
  EXPECT_EQ(shell_program_word("X=$(pwd) ./x"), "");
  EXPECT_EQ(shell_program_word("(cd a; ./b)"), "");
  EXPECT_EQ(shell_program_word("echo hi; exec sleep 600"), "");
}

}  // namespace
}  // namespace stackie
