#include "base/json.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <cmath>
#include <string>

namespace stackie::ipc {
namespace {

Json parse_ok(std::string_view text) {
  auto parsed = parse_json(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : Json();
}

void expect_invalid(std::string_view text, std::string_view why) {
  auto parsed = parse_json(text);
  ASSERT_FALSE(parsed.ok()) << "accepted: " << text;
  EXPECT_EQ(parsed.error().code, UV_EINVAL) << text;
  EXPECT_NE(parsed.error().message.find(why), std::string::npos)
      << text << " -> " << parsed.error().message;
}

// The writer skips eight plain bytes at a time (issue 25): a byte that needs escaping is found
// at every position of the word, next to every other.
TEST(Json, EscapesAreFoundAtEveryPositionOfAWord) {
  for (char special : {'"', '\\', '\n', '\x01', '\x1f', '\t'}) {
    for (size_t at = 0; at < 24; ++at) {
      std::string text(23, 'a');
      text.insert(at, 1, special);
      std::string written = to_json(Json(text));
      EXPECT_EQ(written.size(), text.size() + 2 + (special == '\x01' || special == '\x1f' ? 5 : 1))
          << written;
      auto back = parse_json(written);
      ASSERT_TRUE(back.ok()) << written;
      EXPECT_EQ(back->as_string(), text);
    }
  }
  // Plain bytes only, at every length around the word size: copied as they are.
  for (size_t size = 0; size < 20; ++size) {
    std::string text(size, '~');
    EXPECT_EQ(to_json(Json(text)), "\"" + text + "\"");
  }
}

TEST(Json, BuildsAndReadsEveryType) {
  Json value = Json::object({{"null", nullptr},
                             {"yes", true},
                             {"int", 42},
                             {"big", std::int64_t{1} << 40},
                             {"real", 2.5},
                             {"text", "hé"},
                             {"list", Json::Array{1, "two"}}});
  EXPECT_TRUE(value["null"].is_null());
  EXPECT_TRUE(value["yes"].as_bool());
  EXPECT_EQ(value["int"].as_int(), 42);
  EXPECT_EQ(value["big"].as_int(), std::int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(value["real"].as_double(), 2.5);
  EXPECT_EQ(value["text"].as_string(), "hé");
  EXPECT_EQ(value["list"].size(), 2u);
  EXPECT_EQ(value["list"][1].as_string(), "two");
  EXPECT_TRUE(value["absent"].is_null());
  EXPECT_EQ(value["absent"].int_or(7), 7);
  EXPECT_EQ(value["text"].int_or(7), 7);  // wrong type: the fallback
  EXPECT_EQ(value["text"].string_or("x"), "hé");
  EXPECT_FALSE(value.contains("absent"));
}

TEST(Json, SetReplacesAndKeepsInsertionOrder) {
  Json value;
  value.set("b", 1).set("a", 2).set("b", 3);
  EXPECT_EQ(to_json(value), R"({"b":3,"a":2})");
  Json list;
  list.push_back(1).push_back("x");
  EXPECT_EQ(to_json(list), R"([1,"x"])");
}

TEST(Json, WritesCompactExactJson) {
  EXPECT_EQ(to_json(Json()), "null");
  EXPECT_EQ(to_json(Json(false)), "false");
  EXPECT_EQ(to_json(Json(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(to_json(Json(0.1)), "0.1");
  EXPECT_EQ(to_json(Json(1e300)), "1e+300");
  EXPECT_EQ(to_json(Json(std::nan(""))), "null");
  EXPECT_EQ(to_json(Json::object()), "{}");
  EXPECT_EQ(to_json(Json::array()), "[]");
  EXPECT_EQ(to_json_line(Json::object({{"a", 1}})), "{\"a\":1}\n");
}

TEST(Json, EscapesStringsSoALineStaysOneLine) {
  EXPECT_EQ(to_json(Json("a\"b\\c\nd\re\tf\bg\fh")), R"("a\"b\\c\nd\re\tf\bg\fh")");
  EXPECT_EQ(to_json(Json(std::string("\x01\x1f", 2))), R"("\u0001\u001f")");
  // NUL: the parser refuses \u0000, so the writer shows it as U+FFFD (issue 15 item 2).
  EXPECT_EQ(to_json(Json(std::string("nul\0byte", 8))),
            "\"nul\xEF\xBF\xBD"
            "byte\"");
  EXPECT_EQ(to_json(Json("/")), R"("/")");
  const std::string line = to_json_line(Json(std::string(1000, '\n')));
  EXPECT_EQ(line.find('\n'), line.size() - 1);
}

// What the writer makes, the parser takes: every byte string, written and read back, is that
// string with NUL and each byte that is not UTF-8 replaced by U+FFFD.
TEST(Json, ParsesWhateverItWrites) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  for (const std::string& text : {every_byte, std::string("\0", 1), std::string("a\0\xff\0b", 5)}) {
    auto back = parse_json(to_json(Json::object({{"line", text}})));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ((*back)["line"].as_string().find('\0'), std::string::npos);
  }
}

TEST(Json, ReplacesInvalidUtf8WhenWriting) {
  // A block's log line can hold any bytes; the message must still be valid JSON.
  EXPECT_EQ(to_json(Json(std::string("a\xff"
                                     "b"))),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(to_json(Json(std::string("\xC0\xAF"))), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong
  EXPECT_EQ(to_json(Json(std::string("\xED\xA0\x80"))),                               // a surrogate
            "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(to_json(Json(std::string("\xE2\x82"))), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // truncated
  EXPECT_EQ(to_json(Json("€ 𝄞")), "\"€ 𝄞\"");  // valid multi-byte passes as is
  auto reparsed = parse_json(to_json(Json(std::string("\xff\xfe\x80"))));
  ASSERT_TRUE(reparsed.ok());
}

TEST(Json, ParsesValues) {
  Json value = parse_ok(R"( {"a": [1, -2, 3.5, 1e3, true, false, null, "x\u00e9\ud834\udd1e"]} )");
  const Json& list = value["a"];
  ASSERT_EQ(list.size(), 8u);
  EXPECT_TRUE(list[0].is_int());
  EXPECT_EQ(list[1].as_int(), -2);
  EXPECT_FALSE(list[2].is_int());
  EXPECT_DOUBLE_EQ(list[2].as_double(), 3.5);
  EXPECT_TRUE(list[3].is_int());  // integral: an integer, whatever its spelling
  EXPECT_EQ(list[3].as_int(), 1000);
  EXPECT_EQ(list[7].as_string(), "xé𝄞");
  EXPECT_EQ(parse_ok("9007199254740991").as_int(), 9007199254740991);  // 2^53 - 1
  EXPECT_FALSE(parse_ok("9007199254740993").is_int());                 // beyond exact
  EXPECT_TRUE(parse_ok("\"\"").is_string());
  EXPECT_EQ(parse_ok("[]").size(), 0u);
}

TEST(Json, RoundTrips) {
  const std::string text =
      R"({"v":1,"id":7,"method":"up","params":{"file":"/a b/s.yml","env":{"K":"v\"q"},)"
      R"("list":[1,2.25,-3,true,null,{}],"unicode":"日本"}})";
  Json value = parse_ok(text);
  EXPECT_EQ(to_json(value), text);
  EXPECT_EQ(parse_ok(to_json(value)), value);
}

TEST(Json, EqualityComparesNumbersByValue) {
  EXPECT_EQ(Json(1), Json(1.0));
  EXPECT_NE(Json(1), Json(1.5));
  EXPECT_NE(Json(1), Json("1"));
  EXPECT_NE(Json::object({{"a", 1}}), Json::object({{"a", 2}}));
}

TEST(Json, RejectsMalformedText) {
  expect_invalid("", "empty");
  expect_invalid("   ", "empty");
  expect_invalid("{", "invalid JSON");
  expect_invalid("{\"a\":}", "invalid JSON");
  expect_invalid("[1,]", "invalid JSON");
  expect_invalid("{\"a\" 1}", "invalid JSON");
  expect_invalid("{'a':1}", "invalid JSON");
  expect_invalid("nul", "invalid JSON");
  expect_invalid("{} {}", "after the value");
  expect_invalid("1 2", "after the value");
  expect_invalid("\"open", "unterminated string");
  expect_invalid("\"bad \\x escape\"", "bad escape");
  expect_invalid("\"\\u12zz\"", "bad \\u escape");
  expect_invalid("\"\\u12\"", "truncated \\u escape");
  expect_invalid("\"\\u0000\"", "\\u0000");
  expect_invalid("\"tab\there\"", "control character");
  expect_invalid("\x01{}", "control character");
  expect_invalid("\xEF\xBB\xBF{}", "non-ASCII");  // a BOM cJSON would skip
  expect_invalid("\"\xff\"", "UTF-8");
  expect_invalid("\"\xC0\xAF\"", "UTF-8");
  expect_invalid("01", "leading zero");
  expect_invalid("1.", "no digit after");
  expect_invalid("1e", "exponent");
  expect_invalid("-", "bad number");
  expect_invalid("+1", "invalid JSON");
  expect_invalid(".5", "invalid JSON");
  expect_invalid("NaN", "invalid JSON");
  expect_invalid("1e400", "out of range");
  expect_invalid("{\"a\":1,\"a\":2}", "duplicate key");
  expect_invalid("\"\\ud834\"", "invalid JSON");  // a lone surrogate
}

TEST(Json, EnforcesTheDepthLimit) {
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
  };
  EXPECT_TRUE(parse_json(nested(64)).ok());
  expect_invalid(nested(65), "nesting deeper than 64");
  JsonLimits shallow;
  shallow.max_depth = 2;
  EXPECT_TRUE(parse_json(R"({"a":[1]})", shallow).ok());
  EXPECT_FALSE(parse_json(R"({"a":[{}]})", shallow).ok());
  // Brackets inside strings are text, not nesting.
  EXPECT_TRUE(parse_json("\"" + std::string(1000, '[') + "\"").ok());
  // 500k levels in one megabyte: refused by the pre-scan before any recursion.
  auto deep = parse_json(nested(500000));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("nesting"), std::string::npos);
}

TEST(Json, EnforcesTheSizeLimit) {
  JsonLimits small;
  small.max_bytes = 10;
  EXPECT_TRUE(parse_json("[1,2,3,4]", small).ok());
  auto big = parse_json("[1,2,3,4,5,6]", small);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, UV_E2BIG);
  EXPECT_NE(big.error().message.find("over the limit of 10"), std::string::npos);
}

TEST(Json, ObjectsOfManyKeysParseInLinearTime) {
  std::string text = "{";
  for (int i = 0; i < 50000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  text += "}";
  auto parsed = parse_json(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->size(), 50000u);
}

}  // namespace
}  // namespace stackie::ipc
