#include "stack/yaml_node.h"

#include <gtest/gtest.h>

#include "test_support.h"
#include "stack/yaml_fields.h"

namespace stackie {
namespace {

TEST(YamlNode, EveryNodeKnowsItsPosition) {
  auto root = parse_yaml("demo:\n  blocks:\n    api: {port: 80}\n    list: [a, 'b c']\n", "f.yml");
  ASSERT_TRUE(root.ok()) << root.error().message;
  const YamlNode* blocks = root->find("demo")->find("blocks");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->where.line, 3);
  EXPECT_EQ(blocks->where.column, 5);
  const YamlNode* port = blocks->find("api")->find("port");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->text, "80");
  EXPECT_EQ(port->where.line, 3);
  EXPECT_EQ(port->where.column, 17);
  const YamlNode* list = blocks->find("list");
  ASSERT_TRUE(list->is_sequence());
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1].text, "b c");
  EXPECT_EQ(list->items[1].style, YamlNode::Style::quoted);
  // Offsets inside a quoted scalar skip the opening quote.
  EXPECT_EQ(list->items[1].at_offset(2).column, list->items[1].where.column + 3);
  EXPECT_EQ(root->where.file, "f.yml");
}

TEST(YamlNode, EmptyValuesAreNullButQuotedEmptyIsAString) {
  auto root = parse_yaml("a:\nb: ~\nc: ''\nd: {}\n", "f.yml");
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(root->find("a")->is_null());
  EXPECT_TRUE(root->find("b")->is_null());
  EXPECT_TRUE(root->find("c")->is_scalar());
  EXPECT_TRUE(root->find("d")->is_map());
  EXPECT_EQ(root->find("zzz"), nullptr);
}

TEST(YamlNode, DuplicateKeysAreErrors) {
  auto root = parse_yaml("a: 1\nb: 2\na: 3\n", "f.yml");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message, "f.yml:3:1: duplicate key 'a' (first at line 1)");
}

TEST(YamlNode, TabsInIndentationAreNamed) {
  auto root = parse_yaml("a:\n  b: 1\n \tc: 2\n", "f.yml");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message,
            "f.yml:3:2: tab character in indentation; YAML indents with spaces");
  // A tab inside a value, or after a block scalar's indentation, is content.
  EXPECT_TRUE(parse_yaml("a: \"x\ty\"\n", "f.yml").ok());
  auto makefile = parse_yaml("text: |\n  all:\n  \techo hi\n", "f.yml");
  ASSERT_TRUE(makefile.ok()) << makefile.error().message;
  EXPECT_EQ(makefile->find("text")->text, "all:\n\techo hi\n");
}

TEST(YamlNode, SyntaxErrorsCarryLibyamlsPosition) {
  auto root = parse_yaml("a: [1, 2\n", "f.yml");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message.rfind("f.yml:2:1: YAML syntax error: ", 0), 0u)
      << root.error().message;
}

TEST(YamlNode, AliasesCopyTheAnchoredNode) {
  auto root = parse_yaml("a: &x [1, 2]\nb: *x\n", "f.yml");
  ASSERT_TRUE(root.ok()) << root.error().message;
  ASSERT_TRUE(root->find("b")->is_sequence());
  EXPECT_EQ(root->find("b")->items.size(), 2u);
}

TEST(YamlNode, NonScalarKeysAndSecondDocumentsAreRefused) {
  EXPECT_FALSE(parse_yaml("? [a]\n: 1\n", "f.yml").ok());
  auto two = parse_yaml("a: 1\n---\nb: 2\n", "f.yml");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().message.find("more than one YAML document"), std::string::npos);
}

TEST(YamlNode, UnreadableFileIsOneLine) {
  testing::TempDir dir;
  auto missing = parse_yaml_file(dir / "nope.yml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, dir / "nope.yml" + ": cannot read: No such file or directory");
  auto directory = parse_yaml_file(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().message, dir.path() + ": cannot read: Is a directory");
}

TEST(YamlFields, DidYouMeanOnlyForPlausibleTypos) {
  EXPECT_EQ(did_you_mean("dependson", {"depends_on", "command"}), "; did you mean 'depends_on'?");
  EXPECT_EQ(did_you_mean("prot", {"port", "type"}), "; did you mean 'port'?");
  EXPECT_EQ(did_you_mean("zebra", {"port", "type"}), "");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
}

TEST(YamlFields, TypedReadsSayWhatWasExpected) {
  auto root = parse_yaml("n: abc\nb: maybe\nd: 5 minutes\nl: {a: 1}\nok: 2s\n", "f.yml");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(read_int(*root->find("n"), "n").error().message,
            "f.yml:1:4: 'n' must be a number, got 'abc'");
  EXPECT_EQ(read_bool(*root->find("b"), "b").error().message,
            "f.yml:2:4: 'b' must be true or false, got 'maybe'");
  EXPECT_FALSE(read_duration_ms(*root->find("d"), "d").ok());
  EXPECT_EQ(*read_duration_ms(*root->find("ok"), "ok"), 2000);
  EXPECT_EQ(read_string_list(*root->find("l"), "l").error().message,
            "f.yml:4:4: 'l' must be a list, got a map");
}

}  // namespace
}  // namespace stackie
