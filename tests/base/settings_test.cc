#include "stack/settings.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace stackie {
namespace {

TEST(Settings, MissingFileIsAllDefaults) {
  testing::TempDir dir;
  auto settings = load_settings(dir / "config.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_EQ(*settings, Settings{});
  EXPECT_EQ(settings->log_max_size, 10u * 1024 * 1024);
  EXPECT_EQ(settings->log_max_files, 5);
  EXPECT_EQ(settings->default_restart, RestartPolicy::on_failure);
  EXPECT_FALSE(settings->no_sandbox);
}

TEST(Settings, EveryKey) {
  auto settings = parse_settings(R"(
storage_root = "/data/stackie"
socket_path = "/run/me/stackie.sock"
no_sandbox = true
restart = "always"
[logs]
max_size = "2MiB"
max_files = 3
)",
                                 "config.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_EQ(settings->storage_root, "/data/stackie");
  EXPECT_EQ(settings->socket_path, "/run/me/stackie.sock");
  EXPECT_TRUE(settings->no_sandbox);
  EXPECT_EQ(settings->default_restart, RestartPolicy::always);
  EXPECT_EQ(settings->log_max_size, 2u * 1024 * 1024);
  EXPECT_EQ(settings->log_max_files, 3);
  EXPECT_EQ(parse_settings("[logs]\nmax_size = 4096\n", "c")->log_max_size, 4096u);
}

TEST(Settings, UnknownKeysAreErrorsWithPosition) {
  auto top = parse_settings("storage_root = \"/x\"\nstorag_root = \"/y\"\n", "config.toml");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.error().message,
            "config.toml:2:1: unknown setting 'storag_root' in config.toml; did you mean "
            "'storage_root'?");
  auto nested = parse_settings("[logs]\n  max_count = 3\n", "config.toml");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(
      nested.error().message.rfind("config.toml:2:3: unknown setting 'max_count' in [logs]", 0), 0u)
      << nested.error().message;
}

TEST(Settings, WrongTypesAndSyntax) {
  EXPECT_EQ(parse_settings("no_sandbox = \"yes\"\n", "c").error().message,
            "c:1:14: 'no_sandbox' must be true or false");
  EXPECT_EQ(parse_settings("storage_root = \"rel/dir\"\n", "c").error().message,
            "c:1:16: 'storage_root' must be an absolute path, got 'rel/dir'");
  EXPECT_FALSE(parse_settings("restart = \"sometimes\"\n", "c").ok());
  EXPECT_FALSE(parse_settings("[logs]\nmax_size = \"10 parsecs\"\n", "c").ok());
  EXPECT_FALSE(parse_settings("[logs]\nmax_files = 0\n", "c").ok());
  EXPECT_FALSE(parse_settings("logs = 3\n", "c").ok());
  auto syntax = parse_settings("a = = 1\n", "c");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().message.rfind("c:1:", 0), 0u) << syntax.error().message;
  EXPECT_NE(syntax.error().message.find("TOML syntax error"), std::string::npos);
}

TEST(Settings, UnreadableFileIsAnError) {
  testing::TempDir dir;
  // A directory in place of the file: unreadable for root too.
  std::filesystem::create_directories(dir / "config.toml");
  auto settings = load_settings(dir / "config.toml");
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.error().message, dir / "config.toml" + ": cannot read: Is a directory");
}

}  // namespace
}  // namespace stackie
