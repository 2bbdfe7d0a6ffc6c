// Our own small JSON value, used for IPC params, results and event data by both the CLI and the
// daemon. cJSON parses the text inside json.cc only (DESIGN.md §2: no third-party type in a
// header); the writer is ours so integers print exactly and any string (a log line with broken
// UTF-8, a NUL) still produces valid JSON.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/error.h"

namespace stackie {

class Json {
 public:
  enum class Type { null, boolean, integer, real, string, array, object };
  using Array = std::vector<Json>;
  // Keys keep insertion order (stable output, readable `--json`); a parsed object never holds a
  // key twice (the parser rejects duplicates).
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool value) : value_(value) {}
  template <std::integral T>
  requires(!std::same_as<T, bool>) Json(T value) : value_(static_cast<std::int64_t>(value)) {}
  Json(double value) : value_(value) {}
  Json(const char* value) : value_(std::string(value)) {}
  Json(std::string_view value) : value_(std::string(value)) {}
  Json(std::string value) : value_(std::move(value)) {}
  Json(Array value) : value_(std::move(value)) {}
  Json(Object value) : value_(std::move(value)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }
  // Json::object({{"block", "db"}, {"state", "running"}})
  static Json object(std::initializer_list<std::pair<std::string, Json>> members);

  Type type() const { return static_cast<Type>(value_.index()); }
  bool is_null() const { return type() == Type::null; }
  bool is_bool() const { return type() == Type::boolean; }
  bool is_int() const { return type() == Type::integer; }
  bool is_number() const { return is_int() || type() == Type::real; }
  bool is_string() const { return type() == Type::string; }
  bool is_array() const { return type() == Type::array; }
  bool is_object() const { return type() == Type::object; }

  // Checked accessors: calling one on the wrong type is a programmer error (assert).
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_double() const;  // integers convert
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;
  Object& as_object();

  // Lenient readers for params: the fallback when absent or of another type.
  bool bool_or(bool fallback) const { return is_bool() ? as_bool() : fallback; }
  std::int64_t int_or(std::int64_t fallback) const { return is_int() ? as_int() : fallback; }
  double number_or(double fallback) const { return is_number() ? as_double() : fallback; }
  std::string string_or(std::string_view fallback) const {
    return is_string() ? as_string() : std::string(fallback);
  }

  // Object member or nullptr (also nullptr when this is not an object).
  const Json* find(std::string_view key) const;
  Json* find(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // Member or a shared null value: params["tail"].int_or(10). Never inserts.
  const Json& operator[](std::string_view key) const;
  const Json& operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  // Array element; asserts the index is in range. (A template so that list[0] does not read
  // as the null `const char*` key.)
  template <std::integral I>
  const Json& operator[](I index) const {
    return at(static_cast<std::size_t>(index));
  }
  const Json& at(std::size_t index) const;

  // Object: replace the member's value or append it (turns a null into an object). Returns *this
  // so calls chain.
  Json& set(std::string key, Json value);
  // Array: append (turns a null into an array).
  Json& push_back(Json value);
  // Elements of an array, members of an object, else 0.
  std::size_t size() const;

  // Numbers compare by value across integer/real; objects compare member by member, in order.
  friend bool operator==(const Json& a, const Json& b);

 private:
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> value_;
};

struct JsonLimits {
  std::size_t max_bytes = std::size_t{1} << 20;  // the whole text
  std::size_t max_depth = 64;                    // nested arrays/objects
};

// Parses exactly one JSON value (whitespace around it allowed, nothing else). Errors:
//   code UV_E2BIG  — the text is longer than limits.max_bytes ("too large");
//   code UV_EINVAL — syntax, nesting deeper than limits.max_depth, invalid UTF-8, a duplicate
//                    object key, a string holding U+0000.
// Numbers: an integral value within ±2^53 is an integer, anything else a real.
Result<Json> parse_json(std::string_view text, const JsonLimits& limits = {});

// Compact JSON, no newline. Never fails, and parse_json accepts all it writes: invalid UTF-8
// and NUL become U+FFFD, NaN/Inf become null.
std::string to_json(const Json& value);
// to_json(value) + "\n": one message of the line protocol (the output never holds a raw newline).
std::string to_json_line(const Json& value);
// to_json(value) appended to `out`, and a string's JSON text: for messages written around a
// value instead of built as a Json that holds (and copies) it.
void append_json(std::string& out, const Json& value);
void append_json_string(std::string& out, std::string_view text);
// append_json_string without the quotes around the text, for a writer whose own text ends with
// the opening quote and starts with the closing one (a follower's lines event, issue 25).
void append_json_string_contents(std::string& out, std::string_view text);

}  // namespace stackie
