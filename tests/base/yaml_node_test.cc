#include "stack/yaml_node.h"

#include <gtest/gtest.h>

#include "stack/yaml_fields.h"
#include "test_support.h"

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

// `depth` nested flow sequences around a scalar: the root list is level 1, the scalar level
// depth + 1.
std::string nested(int depth) {
  return std::string(static_cast<size_t>(depth), '[') + "x" +
         std::string(static_cast<size_t>(depth), ']') + "\n";
}

TEST(YamlNode, NestingStopsAt64Levels) {
  EXPECT_TRUE(parse_yaml(nested(63), "f.yml").ok());
  auto too_deep = parse_yaml(nested(64), "f.yml");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error().message, "f.yml:1:65: nesting deeper than 64 levels");
  // 10000 levels (recursion here and in the destructor would have overflowed the stack).
  auto hostile = parse_yaml(nested(10000), "f.yml");
  ASSERT_FALSE(hostile.ok());
  EXPECT_EQ(hostile.error().message, "f.yml:1:65: nesting deeper than 64 levels");
}

TEST(YamlNode, AnAliasCountsTheDepthOfWhatItCopies) {
  // The anchored list is 40 levels high; copied at level 30 it would reach level 69.
  const std::string anchored = "a: &deep " + nested(39);
  std::string text = anchored + "b: ";
  for (int i = 0; i < 28; ++i) text += "[";
  text += "*deep";
  for (int i = 0; i < 28; ++i) text += "]";
  text += "\n";
  auto root = parse_yaml(text, "f.yml");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message, "f.yml:2:32: nesting deeper than 64 levels");
}

TEST(YamlNode, BillionLaughsIsRefusedBeforeItCostsMemory) {
  // Nine levels of ten aliases each: 10^9 scalars once expanded, from about 450 bytes.
  std::string text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  const std::string names = "abcdefghi";
  for (size_t i = 1; i < names.size(); ++i) {
    text += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 10; ++k) text += std::string(k ? ", " : "") + "*" + names[i - 1];
    text += "]\n";
  }
  auto root = parse_yaml(text, "f.yml");
  ASSERT_FALSE(root.ok());
  // The eighth *d of line 5 is where the total passes 100000 nodes.
  EXPECT_EQ(root.error().message,
            "f.yml:5:36: the document holds more than 100000 nodes once its aliases are expanded");
}

TEST(YamlNode, ModestAliasesStillExpand) {
  // Four levels of ten: 11111 nodes, well within the limit.
  auto root = parse_yaml(
      "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
      "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
      "f.yml");
  ASSERT_TRUE(root.ok()) << root.error().message;
  const YamlNode& d = *root->find("d");
  ASSERT_EQ(d.items.size(), 10u);
  EXPECT_EQ(d.items[9].items[9].items[9].items[9].text, "1");
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
  auto root = parse_yaml(
      "n: abc\nb: maybe\nd: 5 minutes\nl: {a: 1}\nok: 2s\nsum: 1h30m\nhuge: '9999999999999999h'\n",
      "f.yml");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(read_int(*root->find("n"), "n").error().message,
            "f.yml:1:4: 'n' must be a number, got 'abc'");
  EXPECT_EQ(read_bool(*root->find("b"), "b").error().message,
            "f.yml:2:4: 'b' must be true or false, got 'maybe'");
  EXPECT_EQ(read_duration_ms(*root->find("d"), "d").error().message,
            "f.yml:3:5: 'd' must be a duration such as 500ms, 2s, 1m or 1h30m, got '5 minutes': "
            "unknown unit (ms, s, m, h or d)");
  EXPECT_EQ(*read_duration_ms(*root->find("ok"), "ok"), 2000);
  EXPECT_EQ(*read_duration_ms(*root->find("sum"), "sum"), 5'400'000);
  // Once a negative time (the old parser multiplied without a check); the column is the
  // number's, inside the quotes.
  EXPECT_EQ(read_duration_ms(*root->find("huge"), "huge").error().message,
            "f.yml:7:8: 'huge' must be a duration such as 500ms, 2s, 1m or 1h30m, got "
            "'9999999999999999h': longer than 100 years (36500d)");
  EXPECT_EQ(read_string_list(*root->find("l"), "l").error().message,
            "f.yml:4:4: 'l' must be a list, got a map");
}

}  // namespace
}  // namespace stackie
