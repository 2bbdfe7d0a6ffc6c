#include "stack/secrets.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace stackie {
namespace {

TEST(Secrets, LookupOrderEnvironmentCompanionDotEnvDevVars) {
  testing::TempDir dir;
  std::string stack = dir.write("app.yml", "x: {}\n");
  dir.write("app.secrets.yml", "secrets:\n  A: from-companion\n  B: from-companion\n");
  dir.write(".env", "A=from-env-file\nB=from-env-file\nC=from-env-file\n");
  dir.write(".dev.vars", "C=from-dev-vars\nD=from-dev-vars\n");
  SecretStore store({{"A", "from-environment"}}, stack);
  EXPECT_EQ(**store.lookup("A"), "from-environment");
  EXPECT_EQ(**store.lookup("B"), "from-companion");
  EXPECT_EQ(**store.lookup("C"), "from-env-file");
  EXPECT_EQ(**store.lookup("D"), "from-dev-vars");
  auto missing = store.lookup("E");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(store.sources_description(), "the environment, app.secrets.yml, .env, .dev.vars");
}

TEST(Secrets, CompanionName) {
  EXPECT_EQ(companion_secrets_path("/p/stackie-stack.yml"), "/p/stackie-stack.secrets.yml");
  EXPECT_EQ(companion_secrets_path("/p/stackie.yaml"), "/p/stackie.secrets.yml");
}

TEST(Secrets, DotenvSyntax) {
  auto values = parse_dotenv("# comment\n\nexport A=1\nB = \"two words\"\nC='x=y'\nD=\n", ".env");
  ASSERT_TRUE(values.ok()) << values.error().message;
  EXPECT_EQ(values->at("A"), "1");
  EXPECT_EQ(values->at("B"), "two words");
  EXPECT_EQ(values->at("C"), "x=y");
  EXPECT_EQ(values->at("D"), "");
  EXPECT_EQ(parse_dotenv("A=1\njunk\n", ".env").error().message,
            ".env:2:5: expected '=' after 'junk' (NAME=VALUE)");
}

TEST(Secrets, MalformedCompanionIsAPositionedError) {
  testing::TempDir dir;
  std::string stack = dir.write("app.yml", "x: {}\n");
  dir.write("app.secrets.yml", "secret:\n  A: 1\n");
  SecretStore store({}, stack);
  auto result = store.lookup("A");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, dir / "app.secrets.yml" +
                                        ":1:1: unknown field 'secret' in a secrets file; did you "
                                        "mean 'secrets'?");
}

}  // namespace
}  // namespace stackie
