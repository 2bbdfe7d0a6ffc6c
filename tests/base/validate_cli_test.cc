// `stackie validate` through the real binary: the three-block stack (text and JSON) and every
// bad fixture (exit 1, exactly one line on stderr).
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <gtest/gtest.h>
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
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "stackie validate took more than 20 s";
      return run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
  EXPECT_EQ(out.find("correct-horse-battery"), std::string::npos) << "a secret leaked:\n" << out;
}

TEST(ValidateCli, ThreeBlockStackJson) {
  TempDir home, bin;
  CliRun run = run_stackie({"validate", "--json"}, validate_env(home, bin),
                           fixtures() + "/good/three_blocks");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.find("correct-horse-battery"), std::string::npos) << "a secret leaked";
  std::unique_ptr<cJSON, void (*)(cJSON*)> root(cJSON_Parse(run.out.c_str()), cJSON_Delete);
  ASSERT_NE(root, nullptr) << run.out;
  EXPECT_EQ(cJSON_GetObjectItem(root.get(), "v")->valueint, 1);
  cJSON* stack = cJSON_GetObjectItem(root.get(), "stack");
  EXPECT_STREQ(cJSON_GetObjectItem(stack, "name")->valuestring, "shop");
  EXPECT_EQ(std::string(cJSON_GetObjectItem(stack, "storage_root")->valuestring),
            home / "stackie/storage");
  cJSON* blocks = cJSON_GetObjectItem(root.get(), "blocks");
  ASSERT_EQ(cJSON_GetArraySize(blocks), 3);
  const char* order[] = {"stackie.postgres", "stackie.redis", "api"};
  for (int i = 0; i < 3; ++i)
    EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(blocks, i), "name")->valuestring, order[i]);
  cJSON* pg = cJSON_GetArrayItem(blocks, 0);
  cJSON* policy = cJSON_GetObjectItem(pg, "policy");
  EXPECT_STREQ(cJSON_GetObjectItem(policy, "name")->valuestring, "shop-postgres");
  EXPECT_STREQ(cJSON_GetObjectItem(policy, "identity")->valuestring, "user");
  EXPECT_STREQ(cJSON_GetObjectItem(policy, "network")->valuestring, "localhost");
  EXPECT_STREQ(cJSON_GetObjectItem(pg, "stop_signal")->valuestring, "SIGINT");
  cJSON* env = cJSON_GetObjectItem(pg, "environment");
  EXPECT_STREQ(cJSON_GetObjectItem(env, "POSTGRES_PASSWORD")->valuestring, "********");
  EXPECT_STREQ(cJSON_GetObjectItem(env, "PGDATABASE")->valuestring, "shop");
  std::string postgres = cJSON_GetArrayItem(cJSON_GetObjectItem(pg, "command"), 0)->valuestring;
  EXPECT_EQ(postgres.substr(postgres.size() - 9), "/postgres");
  cJSON* api = cJSON_GetArrayItem(blocks, 2);
  cJSON* consumes = cJSON_GetObjectItem(api, "consumes");
  ASSERT_EQ(cJSON_GetArraySize(consumes), 2);
  EXPECT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(consumes, 0), "local_port")->valueint, 5432);
  EXPECT_STREQ(cJSON_GetObjectItem(cJSON_GetArrayItem(consumes, 1), "provider")->valuestring,
               "stackie.redis");
  EXPECT_STREQ(
      cJSON_GetObjectItem(cJSON_GetObjectItem(api, "environment"), "DATABASE_URL")->valuestring,
      "********");
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
