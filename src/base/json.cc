// Json value, parser (a strict pre-scan, then cJSON builds the tree) and writer.
//
// Why a pre-scan before cJSON: cJSON's nesting limit is a compile-time constant (1000), it
// accepts a few things RFC 8259 does not ("01", "1.", raw control characters in strings), it
// does not check UTF-8, and its strings are C strings (an escaped U+0000 would silently cut
// one). One linear pass over the bytes settles all of that, so what reaches cJSON is valid JSON
// within our limits, and the daemon and the CLI agree on what "valid" means.
#include "base/json.h"

#include "base/byte_words.h"

#include <cjson/cJSON.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_set>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stackie {

// ---------------------------------------------------------------- value

Json Json::object(std::initializer_list<std::pair<std::string, Json>> members) {
  Json result = object();
  for (const auto& [key, value] : members) result.set(key, value);
  return result;
}

bool Json::as_bool() const {
  assert(is_bool());
  return std::get<bool>(value_);
}

std::int64_t Json::as_int() const {
  assert(is_int());
  return std::get<std::int64_t>(value_);
}

double Json::as_double() const {
  assert(is_number());
  if (is_int()) return static_cast<double>(std::get<std::int64_t>(value_));
  return std::get<double>(value_);
}

const std::string& Json::as_string() const {
  assert(is_string());
  return std::get<std::string>(value_);
}

const Json::Array& Json::as_array() const {
  assert(is_array());
  return std::get<Array>(value_);
}

Json::Array& Json::as_array() {
  assert(is_array());
  return std::get<Array>(value_);
}

const Json::Object& Json::as_object() const {
  assert(is_object());
  return std::get<Object>(value_);
}

Json::Object& Json::as_object() {
  assert(is_object());
  return std::get<Object>(value_);
}

const Json* Json::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [name, value] : std::get<Object>(value_))
    if (name == key) return &value;
  return nullptr;
}

Json* Json::find(std::string_view key) {
  return const_cast<Json*>(static_cast<const Json*>(this)->find(key));
}

const Json& Json::operator[](std::string_view key) const {
  static const Json kNull;
  const Json* member = find(key);
  return member ? *member : kNull;
}

const Json& Json::at(std::size_t index) const {
  const Array& elements = as_array();
  assert(index < elements.size());
  return elements[index];
}

Json& Json::set(std::string key, Json value) {
  if (is_null()) value_ = Object{};
  if (Json* member = find(key)) {
    *member = std::move(value);
  } else {
    as_object().emplace_back(std::move(key), std::move(value));
  }
  return *this;
}

Json& Json::push_back(Json value) {
  if (is_null()) value_ = Array{};
  as_array().push_back(std::move(value));
  return *this;
}

std::size_t Json::size() const {
  if (is_array()) return as_array().size();
  if (is_object()) return as_object().size();
  return 0;
}

bool operator==(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  return a.value_ == b.value_;
}

// ---------------------------------------------------------------- UTF-8

namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when it is invalid (overlong forms,
// surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length;
  unsigned char min_second = 0x80, max_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;  // overlong
    if (lead == 0xED) max_second = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;  // overlong
    if (lead == 0xF4) max_second = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

// ---------------------------------------------------------------- strict pre-scan

bool is_whitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

class PreScanner {
 public:
  PreScanner(std::string_view text, std::size_t max_depth) : text_(text), max_depth_(max_depth) {}

  Status run() {
    std::size_t depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '"') {
        STACKIE_TRY(scan_string());
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        STACKIE_TRY(scan_number());
      } else if (c == '[' || c == '{') {
        if (++depth > max_depth_)
          return fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
        ++pos_;
      } else if (c == ']' || c == '}') {
        if (depth > 0) --depth;  // unbalanced brackets are cJSON's syntax error
        ++pos_;
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        return fail("non-ASCII byte outside a string");
      } else if (static_cast<unsigned char>(c) < 0x20 && !is_whitespace(c)) {
        // cJSON would skip any control character as if it were a space.
        return fail("control character outside a string");
      } else {
        ++pos_;  // punctuation, whitespace, literals: cJSON checks them
      }
    }
    return {};
  }

 private:
  Status fail(const std::string& what) const {
    return Error{-EINVAL, "invalid JSON at byte " + std::to_string(pos_) + ": " + what};
  }

  static bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  Status scan_string() {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return {};
      }
      if (c < 0x20) return fail("raw control character in a string");
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) break;
        const char escape = text_[pos_ + 1];
        if (escape == 'u') {
          if (pos_ + 6 > text_.size()) return fail("truncated \\u escape");
          for (std::size_t k = 2; k < 6; ++k)
            if (!is_hex(text_[pos_ + k])) return fail("bad \\u escape");
          if (text_.substr(pos_ + 2, 4) == "0000") return fail("\\u0000 in a string");
          pos_ += 6;
        } else if (std::string_view("\"\\/bfnrt").find(escape) != std::string_view::npos) {
          pos_ += 2;
        } else {
          return fail("bad escape in a string");
        }
        continue;
      }
      const std::size_t length = utf8_sequence_length(text_, pos_);
      if (length == 0) return fail("invalid UTF-8 in a string");
      pos_ += length;
    }
    return fail("unterminated string");
  }

  // RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  Status scan_number() {
    const auto digit = [&] {
      return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
    };
    const auto digits = [&] {
      if (!digit()) return false;
      while (digit()) ++pos_;
      return true;
    };
    if (text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
      if (digit()) return fail("leading zero in a number");
    } else if (!digits()) {
      return fail("bad number");
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digits()) return fail("bad number: no digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digits()) return fail("bad number: no digit in the exponent");
    }
    return {};
  }

  std::string_view text_;
  std::size_t max_depth_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------- cJSON tree -> Json

struct CjsonDeleter {
  void operator()(cJSON* item) const { cJSON_Delete(item); }
};

// Integers beyond 2^53 are not exact in a double, which is all cJSON keeps.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

// Fills `out` (an output parameter rather than Result<Json>: GCC 12 with sanitizers warns
// falsely about moving variants through Result, and -Werror makes that fatal).
Status from_cjson(const cJSON* item, Json& out) {
  if (cJSON_IsNull(item)) {
    out = Json();
  } else if (cJSON_IsBool(item)) {
    out = Json(static_cast<bool>(cJSON_IsTrue(item)));
  } else if (cJSON_IsNumber(item)) {
    const double number = item->valuedouble;
    if (!std::isfinite(number)) return Error{-EINVAL, "invalid JSON: number out of range"};
    if (std::floor(number) == number && std::fabs(number) < kMaxExactInteger)
      out = Json(static_cast<std::int64_t>(number));
    else
      out = Json(number);
  } else if (cJSON_IsString(item)) {
    out = Json(std::string(item->valuestring));
  } else if (cJSON_IsArray(item)) {
    Json::Array elements;
    for (const cJSON* child = item->child; child; child = child->next) {
      elements.emplace_back();
      STACKIE_TRY(from_cjson(child, elements.back()));
    }
    out = Json(std::move(elements));
  } else if (cJSON_IsObject(item)) {
    Json::Object members;
    std::unordered_set<std::string_view> seen;  // a set: a 1 MiB object of 100k keys stays linear
    for (const cJSON* child = item->child; child; child = child->next) {
      if (!seen.insert(child->string).second)
        return Error{-EINVAL, std::string("invalid JSON: duplicate key \"") + child->string + "\""};
      members.emplace_back(child->string, Json());
      STACKIE_TRY(from_cjson(child, members.back().second));
    }
    out = Json(std::move(members));
  } else {
    return Error{-EINVAL, "invalid JSON: unexpected value"};
  }
  return {};
}

// ---------------------------------------------------------------- writer

// Whether any of the eight bytes in `word` is below 0x20, '"', '\\' or not ASCII. A follower's
// events are mostly log text that needs no escape (issue 25).
bool needs_escape(uint64_t word) {
  using namespace byte_words;
  return (word & kHigh) != 0 || has_byte_below(word, 0x20) || has_zero_byte(word ^ (kOnes * '"')) ||
         has_zero_byte(word ^ (kOnes * '\\'));
}

#if defined(__SSE2__)
// needs_escape for the sixteen bytes at `at`: a signed comparison with 0x20 finds the control
// bytes and, as negative, the bytes that are not ASCII. Twice the bytes of needs_escape for
// fewer instructions (issue 25: a follower's event is mostly this scan).
bool needs_escape16(const char* at) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i special = _mm_or_si128(_mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)),
                                       _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))));
  return _mm_movemask_epi8(special) != 0;
}
#endif

void write_string_contents(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size();) {
    // Copy the run of bytes that need nothing in one go (most of any log line).
    std::size_t run = i;
    // Sixteen or eight bytes at a time while none needs escaping, then byte by byte.
#if defined(__SSE2__)
    while (run + 16 <= text.size() && !needs_escape16(text.data() + run)) run += 16;
#endif
    while (run + 8 <= text.size() && !needs_escape(byte_words::load8(text.data() + run))) run += 8;
    while (run < text.size()) {
      const unsigned char b = static_cast<unsigned char>(text[run]);
      if (b < 0x20 || b == '"' || b == '\\' || b >= 0x80) break;
      ++run;
    }
    if (run > i) {
      out.append(text.substr(i, run - i));
      i = run;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\0':
          // The parser refuses \u0000 (its strings are C strings), so the writer never makes
          // one: a NUL is shown as U+FFFD, like a byte that is not UTF-8. A block that writes a
          // NUL into its log must not make the line unreadable to every client (issue 15).
          out += "\xEF\xBF\xBD";
          break;
        default:
          if (c < 0x20) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for each byte that is not UTF-8 (a log line may be binary)
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
}

void write_string(std::string& out, std::string_view text) {
  out += '"';
  write_string_contents(out, text);
  out += '"';
}

void write_value(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::Type::null: out += "null"; break;
    case Json::Type::boolean: out += value.as_bool() ? "true" : "false"; break;
    case Json::Type::integer: out += std::to_string(value.as_int()); break;
    case Json::Type::real: {
      const double number = value.as_double();
      if (!std::isfinite(number)) {
        out += "null";  // JSON has no NaN/Infinity
        break;
      }
      char buffer[32];
      const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, number);
      assert(ec == std::errc());
      out.append(buffer, end);
      break;
    }
    case Json::Type::string: write_string(out, value.as_string()); break;
    case Json::Type::array: {
      out += '[';
      bool first = true;
      for (const Json& element : value.as_array()) {
        if (!first) out += ',';
        first = false;
        write_value(out, element);
      }
      out += ']';
      break;
    }
    case Json::Type::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : value.as_object()) {
        if (!first) out += ',';
        first = false;
        write_string(out, key);
        out += ':';
        write_value(out, member);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace

Result<Json> parse_json(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    return Error{-E2BIG, "JSON text of " + std::to_string(text.size()) +
                             " bytes is over the limit of " + std::to_string(limits.max_bytes)};
  STACKIE_TRY(PreScanner(text, limits.max_depth).run());
  const char* end = nullptr;
  std::unique_ptr<cJSON, CjsonDeleter> root(
      cJSON_ParseWithLengthOpts(text.data(), text.size(), &end, /*require_null_terminated=*/0));
  // On failure cJSON points `end` at the error; on success just past the value.
  const std::size_t offset = end ? static_cast<std::size_t>(end - text.data()) : 0;
  if (!root) {
    if (text.find_first_not_of(" \t\n\r") == std::string_view::npos)
      return Error{-EINVAL, "invalid JSON: empty text"};
    return Error{-EINVAL, "invalid JSON at byte " + std::to_string(offset)};
  }
  if (text.find_first_not_of(" \t\n\r", offset) != std::string_view::npos)
    return Error{-EINVAL, "invalid JSON at byte " + std::to_string(offset) +
                              ": unexpected data after the value"};
  Json value;
  STACKIE_TRY(from_cjson(root.get(), value));
  return value;
}

std::string to_json(const Json& value) {
  std::string out;
  write_value(out, value);
  return out;
}

void append_json(std::string& out, const Json& value) {
  write_value(out, value);
}

void append_json_string(std::string& out, std::string_view text) {
  write_string(out, text);
}

void append_json_string_contents(std::string& out, std::string_view text) {
  write_string_contents(out, text);
}

std::string to_json_line(const Json& value) {
  std::string out = to_json(value);
  out += '\n';
  return out;
}

}  // namespace stackie
