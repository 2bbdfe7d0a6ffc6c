// Hostile blocks against the host-side code that touches their storage (issue 14), with the real
// stackied and stackie-lockbox, unprivileged. The "user's files" are a fake ~/.ssh under the
// test's directory; every case checks that nothing there was read or written.
// - a block replaces its runtime dir (in its own /tmp) with a symlink to ~/.ssh and crashes: the
//   restart fails with an error naming the path, the key is not read, nothing is planted;
// - a volume dir and a log dir replaced with symlinks fail the next start the same way;
// - a pre-made ephemeral tree that is not ours alone (mode 0777, a log file linked to a file of
//   the user's) is refused, and the user's file gets nothing;
// - a first-party block cannot write its stack file, .env, .dev.vars or .git/hooks (EROFS) while
//   the rest of its directory stays writable.
#include <sys/stat.h>

#include <filesystem>
#include <functional>

#include "support/daemon_harness.h"

namespace stackie::fault {
namespace {

constexpr const char* kKey = "-----BEGIN FAKE PRIVATE KEY-----";

class StorageSeams : public DaemonHarness {
 protected:
  void SetUp() override {
    DaemonHarness::SetUp();
    victim_ = dir_ + "/victim/.ssh";
    std::filesystem::create_directories(victim_);
    std::ofstream(victim_ + "/id_ed25519") << kKey << "\n";
    std::filesystem::create_directories(dir_ + "/blocks");
  }

  std::string storage() const { return home_ + "/storage"; }

  // Writes `yaml` as dir/NAME.yml and brings it up with our block catalog; `ephemeral` as
  // `up --ephemeral`.
  Result<ipc::Reply> up_with_catalog(const std::string& name, const std::string& yaml,
                                     bool ephemeral = false) {
    std::string file = dir_ + "/" + name + ".yml";
    std::ofstream(file) << yaml;
    ipc::Client client = connect();
    auto env = Json::object({{"PATH", "/usr/bin:/bin"},
                             {"HOME", dir_ + "/victim"},
                             {"STACKIE_BLOCK_PATH", dir_ + "/blocks"}});
    return client.call(
        "up",
        Json::object({{"file", file}, {"cwd", dir_}, {"env", env}, {"ephemeral", ephemeral}}));
  }

  Status down(const std::string& stack) {
    ipc::Client client = connect();
    auto reply = client.call("down", Json::object({{"stack", stack}}));
    if (!reply.ok()) return reply.error();
    if (!reply->ok()) return Error{0, reply->error().message};
    return {};
  }

  // The row of `block` once `done` holds for it (or the last row seen).
  Json wait_row(const std::string& block, const std::function<bool(const Json&)>& done,
                std::chrono::milliseconds timeout) {
    ipc::Client client = connect();
    Json last;
    wait_for(
        [&] {
          Json rows = ps_blocks(client);  // alive for the loop: as_array() refers into it
          for (const auto& row : rows.as_array())
            if (row["name"].string_or("") == block) last = row;
          return done(last);
        },
        timeout);
    return last;
  }

  // Every file now under the fake ~/.ssh, and the key still as it was.
  void expect_victim_untouched() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(victim_))
      names.push_back(entry.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"id_ed25519"}) << "something was planted in ~/.ssh";
    std::ifstream key(victim_ + "/id_ed25519");
    std::string line;
    std::getline(key, line);
    EXPECT_EQ(line, kKey);
  }

  // True when some file below `dir` holds the key (the block copied it out).
  bool key_leaked_into(const std::string& dir) {
    std::error_code ignored;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
      if (it->is_symlink() || !it->is_regular_file()) continue;
      std::ifstream in(it->path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.find(kKey) != std::string::npos) return true;
    }
    return false;
  }

  std::string victim_;
};

TEST_F(StorageSeams, ARuntimeDirReplacedByASymlinkFailsTheRestartAndLeaksNothing) {
  // The definition's runtime dir lives in the block's own /tmp. On its first run the block
  // swaps it for a link to ~/.ssh and crashes; a second run (if one came) would read the key
  // through the bind and plant a file.
  std::ofstream(dir_ + "/blocks/evil.runtime.yml")
      << "evil.runtime:\n"
         "  paths:\n"
         "    run: {runtime: run}\n"
         "    data: {volume: data}\n"
         "  command:\n"
         "    - /bin/sh\n"
         "    - -c\n"
         "    - |\n"
         "      if [ -e \"$2/armed\" ]; then\n"
         "        cat \"$1/id_ed25519\" > \"$2/stolen\"; echo planted > \"$1/planted\"\n"
         "        exec sleep 1000\n"
         "      fi\n"
         "      touch \"$2/armed\"; rm -rf /tmp/run && ln -s \"$3\" /tmp/run; exit 1\n"
         "    - sh\n"
         "    - ${paths.run}\n"
         "    - ${paths.data}\n"
         "    - "
      << victim_ << "\n";
  pid_t daemon = start_daemon();
  (void)daemon;
  auto reply = up_with_catalog("seams",
                               "seams:\n  blocks:\n    evil.runtime:\n"
                               "      restart: always\n");
  ASSERT_TRUE(reply.ok()) << reply.error().message;

  Json row = wait_row(
      "evil.runtime", [](const Json& r) { return r["state"].string_or("") == "failed"; }, 30s);
  ASSERT_EQ(row["state"].string_or(""), "failed")
      << "the restart went ahead: " << row["message"].string_or("");
  std::string run = storage() + "/tmp/seams-evil.runtime/run";
  std::string message = row["message"].string_or("");
  EXPECT_NE(message.find(run), std::string::npos) << "the error names the path: " << message;
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
  EXPECT_TRUE(std::filesystem::exists(storage() + "/volumes/seams/evil.runtime/data/armed"))
      << "the hostile first run did not happen";
  expect_victim_untouched();
  EXPECT_FALSE(key_leaked_into(storage())) << "the key was read into the block's storage";
  std::printf("[ figures  ] runtime dir symlink: %s\n", message.c_str());
}

TEST_F(StorageSeams, AVolumeOrLogDirReplacedByASymlinkFailsTheStartAndLeaksNothing) {
  // Whoever replaced them (a neighbour with the storage as a volume, a process of the block
  // that outlived it), the daemon and the lockbox must not follow them on the next start.
  start_daemon();
  std::string yaml =
      "plain:\n  blocks:\n    keeper:\n      path: .\n      volumes: {data: }\n"
      "      command:\n        - /bin/sh\n        - -c\n"
      "        - 'cat \"$0/id_ed25519\" > \"$0/copy\"; echo planted > \"$0/planted\"; exec sleep "
      "1000'\n        - ${paths.data}\n";
  auto reply = up_with_catalog("plain", yaml);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok()) << reply->error().message;
  ASSERT_TRUE(down("plain").ok());

  std::string data = storage() + "/volumes/plain/keeper/data";
  std::filesystem::rename(data, data + ".real");
  ASSERT_EQ(::symlink(victim_.c_str(), data.c_str()), 0);
  reply = up_with_catalog("plain", yaml);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_FALSE(reply->ok()) << "the block started on a symlinked volume";
  std::string message = reply->error().message;
  EXPECT_NE(message.find(data + ": is a symbolic link"), std::string::npos) << message;
  expect_victim_untouched();
  std::printf("[ figures  ] volume dir symlink: %s\n", message.c_str());
  ASSERT_TRUE(down("plain").ok());

  ::unlink(data.c_str());
  std::filesystem::rename(data + ".real", data);
  std::string logs = storage() + "/logs/plain-keeper";
  std::filesystem::remove_all(logs);
  ASSERT_EQ(::symlink(victim_.c_str(), logs.c_str()), 0);
  reply = up_with_catalog("plain", yaml);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_FALSE(reply->ok()) << "the stack came up with a symlinked log dir";
  message = reply->error().message;
  EXPECT_NE(message.find(logs + ": is a symbolic link"), std::string::npos) << message;
  expect_victim_untouched();
  std::printf("[ figures  ] log dir symlink: %s\n", message.c_str());
}

TEST_F(StorageSeams, APreMadeEphemeralTreeThatIsNotPrivateIsRefused) {
  // Another local user (here: the same user, with the mode another user's tree would need to
  // be usable by both) made the ephemeral storage first, its stderr.log a link to a file of
  // the victim's. The daemon keeps ephemeral storage under STACKIE_HOME here (the harness
  // unsets XDG_RUNTIME_DIR); the name is the one the daemon derives from the stack file.
  std::string file = dir_ + "/eph.yml";
  std::string root =
      home_ + "/ephemeral/ephemeral-" + std::to_string(std::hash<std::string>{}(file));
  std::string logs = root + "/logs/eph-b";
  std::filesystem::create_directories(logs);
  for (const auto& dir : {home_ + "/ephemeral", root, root + "/logs", logs})
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  std::string diary = dir_ + "/victim/diary";
  std::ofstream(diary) << "mine\n";
  ASSERT_EQ(::symlink(diary.c_str(), (logs + "/stderr.log").c_str()), 0);

  start_daemon();
  auto reply =
      up_with_catalog("eph",
                      "eph:\n  blocks:\n    b:\n      path: .\n      command: [/bin/sh, -c, 'echo "
                      "attacker-chosen >&2; exec sleep 1000']\n",
                      true);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_FALSE(reply->ok()) << "a foreign-made ephemeral tree was used";
  std::string message = reply->error().message;
  EXPECT_NE(message.find("mode 0777"), std::string::npos) << message;
  EXPECT_NE(message.find(home_ + "/ephemeral"), std::string::npos) << message;
  std::ifstream in(diary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "mine\n") << "the daemon wrote through the planted link";
  std::printf("[ figures  ] pre-made ephemeral tree: %s\n", message.c_str());

  // A fresh one is made private and works.
  std::filesystem::remove_all(home_ + "/ephemeral");
  reply =
      up_with_catalog("eph",
                      "eph:\n  blocks:\n    b:\n      path: .\n      command: [/bin/sh, -c, 'exec "
                      "sleep 1000']\n",
                      true);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok()) << reply->error().message;
  struct stat info {};
  ASSERT_EQ(::stat(root.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  ASSERT_TRUE(down("eph").ok());
  EXPECT_FALSE(std::filesystem::exists(root)) << "ephemeral storage left behind";
}

TEST_F(StorageSeams, AFirstPartyBlockCannotRewriteWhatDecidesTheNextUp) {
  // The block's directory holds its stack file, a .env, a .dev.vars and a git repository. A
  // block that could write them would run unsandboxed on the next `up`, or plant a hook.
  std::filesystem::create_directories(dir_ + "/.git/hooks");
  std::ofstream(dir_ + "/.env") << "A=1\n";
  std::ofstream(dir_ + "/.dev.vars") << "B=2\n";
  std::ofstream(dir_ + "/own.secrets.yml") << "secrets:\n  C: three\n";
  start_daemon();
  std::string script =
      "          for f in own.yml own.secrets.yml .env .dev.vars .git/hooks/pre-commit; do\n"
      "            if echo 'sandbox: false' 2>>errors >> \"$f\"; then echo \"WROTE $f\";\n"
      "            else echo \"DENIED $f\"; fi\n"
      "          done > results\n"
      "          echo ok > still-writable\n"
      "          exec sleep 1000\n";
  const std::string yaml =
      "own:\n  blocks:\n    b:\n      path: .\n"
      "      command:\n        - /bin/sh\n        - -c\n"
      "        - |\n" +
      script;
  auto reply = up_with_catalog("own", yaml);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(reply->ok()) << reply->error().message;
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(dir_ + "/still-writable"); }, 10s))
      << "the rest of the block's directory is writable";
  std::ifstream in(dir_ + "/results");
  std::string results((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* name :
       {"own.yml", "own.secrets.yml", ".env", ".dev.vars", ".git/hooks/pre-commit"})
    EXPECT_NE(results.find(std::string("DENIED ") + name), std::string::npos)
        << name << " was writable: " << results;
  std::ifstream errors_in(dir_ + "/errors");
  std::string errors((std::istreambuf_iterator<char>(errors_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(errors.find("Read-only file system"), std::string::npos) << errors;
  std::ifstream stack_in(dir_ + "/own.yml");
  std::string stack((std::istreambuf_iterator<char>(stack_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(stack, yaml) << "the stack file changed";
  std::ifstream env_in(dir_ + "/.env");
  std::string env((std::istreambuf_iterator<char>(env_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(env, "A=1\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/.git/hooks/pre-commit"));
  ASSERT_TRUE(down("own").ok());
}

}  // namespace
}  // namespace stackie::fault
