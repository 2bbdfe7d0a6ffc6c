// `stackie validate` through the real binary: the three-block stack (text and JSON) and every
// bad fixture (exit 1, exactly one line on stderr).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "base/json.h"
#include "support/process_wait.h"
#include "test_support.h"

namespace stackie {
namespace {

using testing::fixtures;
using testing::TempDir;

struct CliRun {
  int status = -1;  // exit status, or -1 when killed for taking too long
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs build/src/stackie with exactly `env`, bounded to 20 s.
CliRun run_stackie(const std::vector<std::string>& args, const std::vector<std::string>& env,
                   const std::string& cwd) {
  TempDir io;
  std::string binary = testing::build_root() + "/src/stackie";
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = env;
  for (auto& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (io / "out").c_str(), O_WRONLY | O_CREAT, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, (io / "err").c_str(), O_WRONLY | O_CREAT, 0600);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  CliRun run;
  int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(spawned, 0) << "spawn " << binary;
  if (spawned != 0) return run;
  run.status = testing::wait_exit(pid, std::chrono::seconds(20));
  if (run.status < 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ADD_FAILURE() << "stackie validate still ran after 20 s";
    return run;
  }
  if (run.status >= 128) run.status = -1;  // killed by a signal
  run.out = slurp(io / "out");
  run.err = slurp(io / "err");
  return run;
}

// Fake postgres/redis binaries on PATH, so the test passes on hosts without them. (Where the
// real ones are installed, the block's search globs find those first; the checks below hold
// either way.)
std::vector<std::string> validate_env(const TempDir& home, const TempDir& bin) {
  for (const char* program :
       {"postgres", "initdb", "pg_isready", "redis-server", "redis-cli", "sh"})
    bin.program(std::string("bin/") + program);
  return {"HOME=" + home.path(), "STACKIE_HOME=" + (home / "stackie"),
          "PATH=" + (bin / "bin") + ":/usr/bin:/bin", "API_TOKEN=unused"};
}

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ValidateCli, ThreeBlockStackText) {
  TempDir home, bin;
  CliRun run = run_stackie({"validate", "-f", "stackie-stack.yml"}, validate_env(home, bin),
                           fixtures() + "/good/three_blocks");
  ASSERT_EQ(run.status, 0) << run.err;
  // Git keeps the fixture's secrets file 0644 (or as the checkout's umask made it): validate
  // says so on stderr, one warning line, and nothing else.
  std::string secrets = fixtures() + "/good/three_blocks/stackie-stack.secrets.yml";
  struct stat info {};
  ASSERT_EQ(::stat(secrets.c_str(), &info), 0);
  if ((info.st_mode & 077) != 0) {
    EXPECT_EQ(run.err.rfind(secrets + ": warning: this secrets file has mode ", 0), 0u) << run.err;
  }
  EXPECT_EQ(count_lines(run.err), (info.st_mode & 077) != 0 ? 1u : 0u) << run.err;
  const std::string& out = run.out;
  EXPECT_NE(out.find("stack shop (" + fixtures() + "/good/three_blocks/stackie-stack.yml)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("start order: stackie.postgres stackie.redis api\n"), std::string::npos);
  EXPECT_NE(out.find("1. stackie.postgres (sandbox shop-postgres)"), std::string::npos);
  EXPECT_NE(out.find("3. api (sandbox shop-api), first-party"), std::string::npos);
  EXPECT_NE(out.find("consumes     db: stackie.postgres.postgres at 127.0.0.1:5432"),
            std::string::npos);
  EXPECT_NE(out.find("consumes     cache: stackie.redis.redis at 127.0.0.1:6379"),
            std::string::npos);
  EXPECT_NE(out.find("POSTGRES_PASSWORD=********\n"), std::string::npos);
  EXPECT_NE(out.find("DATABASE_URL=********\n"), std::string::npos);
  EXPECT_NE(out.find("REDIS_URL=redis://127.0.0.1:6379/0\n"), std::string::npos);
  EXPECT_NE(out.find("sandbox      network localhost, identity user"), std::string::npos);
  EXPECT_NE(out.find("stop with SIGINT, then SIGKILL after 30s"), std::string::npos);
  EXPECT_NE(out.find("limits       memory 2GiB, pids 1024, cpu unlimited, shm 64MiB\n"),
            std::string::npos)
      << "the default limits";
  EXPECT_EQ(out.find("correct-horse-battery"), std::string::npos) << "a secret leaked:\n" << out;
}

TEST(ValidateCli, ThreeBlockStackJson) {
  TempDir home, bin;
  CliRun run = run_stackie({"validate", "--json"}, validate_env(home, bin),
                           fixtures() + "/good/three_blocks");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.find("correct-horse-battery"), std::string::npos) << "a secret leaked";
  // Compact like every other --json: one line, the document and its newline.
  ASSERT_EQ(run.out.find('\n'), run.out.size() - 1) << run.out;
  Result<Json> parsed = parse_json(run.out);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message << "\n" << run.out;
  const Json& root = *parsed;
  EXPECT_EQ(root["v"], Json(1));
  const Json& stack = root["stack"];
  EXPECT_EQ(stack["name"], Json("shop"));
  EXPECT_EQ(stack["storage_root"], Json(home / "stackie/storage"));
  const Json& blocks = root["blocks"];
  ASSERT_EQ(blocks.size(), 3u);
  const char* order[] = {"stackie.postgres", "stackie.redis", "api"};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(blocks[i]["name"], Json(order[i]));
  const Json& pg = blocks[0];
  const Json& policy = pg["policy"];
  EXPECT_EQ(policy["name"], Json("shop-postgres"));
  EXPECT_EQ(policy["identity"], Json("user"));
  EXPECT_EQ(policy["network"], Json("localhost"));
  EXPECT_EQ(pg["stop_signal"], Json("SIGINT"));
  const Json& limits = policy["limits"];
  ASSERT_TRUE(limits.is_object());
  EXPECT_EQ(limits["memory"], Json(std::int64_t{2147483648}));
  EXPECT_EQ(limits["pids"], Json(1024));
  EXPECT_EQ(limits["cpu_millis"], Json(0));
  EXPECT_EQ(limits["shm"], Json(std::int64_t{67108864}));
  const Json& env = pg["environment"];
  EXPECT_EQ(env["POSTGRES_PASSWORD"], Json("********"));
  EXPECT_EQ(env["PGDATABASE"], Json("shop"));
  std::string postgres = pg["command"][0].string_or("");
  ASSERT_GE(postgres.size(), 9u);
  EXPECT_EQ(postgres.substr(postgres.size() - 9), "/postgres");
  const Json& api = blocks[2];
  const Json& consumes = api["consumes"];
  ASSERT_EQ(consumes.size(), 2u);
  EXPECT_EQ(consumes[0]["local_port"], Json(5432));
  EXPECT_EQ(consumes[1]["provider"], Json("stackie.redis"));
  EXPECT_EQ(api["environment"]["DATABASE_URL"], Json("********"));
}

TEST(ValidateCli, EveryBadFixtureExitsOneWithOneLine) {
  std::string dir = fixtures() + "/bad";
  size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    TempDir home, bin;
    std::vector<std::string> env = validate_env(home, bin);
    env.push_back("STACKIE_BLOCK_PATH=" + fixtures() + "/blocks");
    env.erase(std::remove(env.begin(), env.end(), "API_TOKEN=unused"), env.end());
    std::string file = entry.path().filename().string();
    CliRun run = run_stackie({"validate", "-f", file}, env, dir);
    EXPECT_EQ(run.status, 1) << file << ": " << run.err;
    EXPECT_EQ(run.out, "") << file;
    EXPECT_EQ(count_lines(run.err), 1u) << file << ": " << run.err;
    std::string prefix = std::filesystem::absolute(entry.path()).lexically_normal().string();
    EXPECT_EQ(run.err.rfind(prefix + ":", 0), 0u) << file << ": " << run.err;
    if (!entry.is_directory()) {
      std::ifstream in(entry.path());
      std::string first;
      std::getline(in, first);
      EXPECT_EQ(run.err, prefix + ":" + first.substr(std::string("# expect: ").size()) + "\n");
    }
    ++checked;
  }
  EXPECT_GE(checked, 25u);
}

TEST(ValidateCli, UsageErrorsExitTwo) {
  TempDir home, bin;
  CliRun unknown = run_stackie({"validate", "--jsn"}, validate_env(home, bin), home.path());
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("unknown argument '--jsn'"), std::string::npos) << unknown.err;
  CliRun missing = run_stackie({"validate", "-f"}, validate_env(home, bin), home.path());
  EXPECT_EQ(missing.status, 2);
  CliRun nothing = run_stackie({"validate"}, validate_env(home, bin), home.path());
  EXPECT_EQ(nothing.status, 1);
  EXPECT_EQ(count_lines(nothing.err), 1u) << nothing.err;
}

TEST(ValidateCli, BrokenUserSettingsAreReported) {
  TempDir home, bin;
  std::filesystem::create_directories(home / "stackie");
  home.write("stackie/config.toml", "restart = \"sometimes\"\n");
  CliRun run = run_stackie({"validate", "-f", fixtures() + "/good/three_blocks/stackie-stack.yml"},
                           validate_env(home, bin), home.path());
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.err, home / "stackie/config.toml" +
                         ":1:11: unknown restart policy 'sometimes' (expected no, on-failure or "
                         "always)\n");
}

}  // namespace
}  // namespace stackie
