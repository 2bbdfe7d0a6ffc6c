#include "stack/interpolate.h"

#include <gtest/gtest.h>

namespace stackie {
namespace {

YamlNode scalar(std::string text, int column = 10) {
  YamlNode node;
  node.kind = YamlNode::Kind::scalar;
  node.text = std::move(text);
  node.where = {"s.yml", 4, column};
  return node;
}

Result<Expanded> resolve(const Reference& ref) {
  if (ref.kind == "vars" && ref.parts[0] == "user") return Expanded{"alice", false};
  if (ref.kind == "secrets" && ref.parts[0] == "PW") return Expanded{"hunter2", true};
  if (ref.kind == "consumes" && ref.parts.size() == 1) return Expanded{"db=127.0.0.1:5432", false};
  if (ref.kind == "consumes") return Expanded{ref.parts[1] == "HOST" ? "127.0.0.1" : "5432", false};
  return error_at(ref.where, "unknown reference '" + ref.text + "'");
}

TEST(Interpolate, ExpandsEveryKindAndMarksSecrets) {
  auto plain =
      interpolate(scalar("u=${vars.user} db=${consumes.db.HOST}:${consumes.db.PORT}"), resolve);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->text, "u=alice db=127.0.0.1:5432");
  EXPECT_FALSE(plain->secret);
  auto secret = interpolate(scalar("pw=${secrets.PW}"), resolve);
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(secret->text, "pw=hunter2");
  EXPECT_TRUE(secret->secret);
}

TEST(Interpolate, ConsumesAllIsOneReferenceAndNothingElseAfterIt) {
  auto all = interpolate(scalar("upstreams: ${consumes.ALL}"), resolve);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->text, "upstreams: db=127.0.0.1:5432");
  // Only the upper-case word: a lower-case one would be a consumes name without HOST|PORT.
  for (const char* bad : {"${consumes.all}", "${consumes.ALL.PORT.x}", "${consumes.db}"}) {
    auto refused = interpolate(scalar(bad), resolve);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.error().message.find("or ${consumes.ALL}"), std::string::npos)
        << refused.error().message;
  }
}

TEST(Interpolate, DollarEscapesAndLoneDollars) {
  EXPECT_EQ(interpolate(scalar("$$5 and $$${vars.user}"), resolve)->text, "$5 and $alice");
  EXPECT_EQ(interpolate(scalar("cost $5, $HOME, end$"), resolve)->text, "cost $5, $HOME, end$");
  EXPECT_EQ(interpolate(scalar("$${not.a.ref}"), resolve)->text, "${not.a.ref}");
}

TEST(Interpolate, ErrorsPointAtTheDollar) {
  auto unknown = interpolate(scalar("abc ${vars.nope}"), resolve);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "s.yml:4:14: unknown reference '${vars.nope}'");
  auto open = interpolate(scalar("x${vars.user"), resolve);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error().message, "s.yml:4:11: unterminated '${' (missing '}')");
  auto kind = interpolate(scalar("${var.user}"), resolve);
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("unknown reference '${var.user}' (references are"),
            std::string::npos);
  EXPECT_FALSE(interpolate(scalar("${}"), resolve).ok());
  EXPECT_FALSE(interpolate(scalar("${consumes.db.URL}"), resolve).ok());
  EXPECT_FALSE(interpolate(scalar("${vars.a.b}"), resolve).ok());
  EXPECT_FALSE(interpolate(scalar("${vars.a b}"), resolve).ok());
}

TEST(Interpolate, QuotedScalarsShiftByTheQuote) {
  YamlNode node = scalar("${vars.x}");
  node.style = YamlNode::Style::quoted;
  EXPECT_EQ(interpolate(node, resolve).error().message,
            "s.yml:4:11: unknown reference '${vars.x}'");
}

TEST(Interpolate, HasReference) {
  EXPECT_TRUE(has_reference("a${b}"));
  EXPECT_FALSE(has_reference("a$${b}"));
  EXPECT_FALSE(has_reference("$a"));
}

}  // namespace
}  // namespace stackie
