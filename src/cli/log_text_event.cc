#include "cli/log_text_event.h"

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stackie::cli {
namespace {

#if defined(__SSE2__)
// Bit i set when byte i of the 16 at `at` ends a run of plain string bytes: a quote, a
// backslash or a control byte (below 0x20, which JSON forbids raw in a string).
unsigned special_bits16(const char* at) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('"'));
  const __m128i backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'));
  const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
  return static_cast<unsigned>(
      _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)));
}
#endif

bool is_special(unsigned char c) {
  return c == '"' || c == '\\' || c < 0x20;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at `at`, or -1.
long hex4(std::string_view in, size_t at) {
  if (at + 4 > in.size()) return -1;
  long value = 0;
  for (size_t i = 0; i < 4; ++i) {
    const int digit = hex_value(in[at + i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// One escape at in[at] (the backslash) into `out`; returns the position after it, or npos for
// an escape JSON does not have (or \u0000, which the generic parser refuses too).
size_t read_escape(std::string_view in, size_t at, std::string& out) {
  if (at + 1 >= in.size()) return std::string_view::npos;
  switch (in[at + 1]) {
    case '"': out += '"'; return at + 2;
    case '\\': out += '\\'; return at + 2;
    case '/': out += '/'; return at + 2;
    case 'b': out += '\b'; return at + 2;
    case 'f': out += '\f'; return at + 2;
    case 'n': out += '\n'; return at + 2;
    case 'r': out += '\r'; return at + 2;
    case 't': out += '\t'; return at + 2;
    case 'u': break;
    default: return std::string_view::npos;
  }
  long code = hex4(in, at + 2);
  if (code <= 0) return std::string_view::npos;
  size_t next = at + 6;
  if (code >= 0xDC00 && code <= 0xDFFF) return std::string_view::npos;  // a lone low half
  if (code >= 0xD800 && code <= 0xDBFF) {
    if (next + 1 >= in.size() || in[next] != '\\' || in[next + 1] != 'u')
      return std::string_view::npos;
    const long low = hex4(in, next + 2);
    if (low < 0xDC00 || low > 0xDFFF) return std::string_view::npos;
    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    next += 6;
  }
  append_utf8(out, static_cast<uint32_t>(code));
  return next;
}

// The JSON string whose opening quote is in[at], unescaped into `out`; returns the position
// after its closing quote, or npos. Plain bytes are copied in runs found 16 at a time: a log
// line is mostly plain, and its "\n" is the one escape most lines have.
size_t read_string(std::string_view in, size_t at, std::string& out) {
  out.clear();
  if (at >= in.size() || in[at] != '"') return std::string_view::npos;
  size_t i = at + 1;
  for (;;) {
    size_t run = i;
#if defined(__SSE2__)
    for (;;) {
      if (run + 16 > in.size()) break;
      const unsigned bits = special_bits16(in.data() + run);
      if (bits != 0) {
        run += static_cast<size_t>(std::countr_zero(bits));
        break;
      }
      run += 16;
    }
#endif
    while (run < in.size() && !is_special(static_cast<unsigned char>(in[run]))) ++run;
    out.append(in.data() + i, run - i);
    if (run >= in.size()) return std::string_view::npos;  // no closing quote
    if (in[run] == '"') return run + 1;
    if (in[run] != '\\') return std::string_view::npos;  // a raw control byte
    i = read_escape(in, run, out);
    if (i == std::string_view::npos) return i;
  }
}

// `expected` at in[at]; returns the position after it, or npos.
size_t expect(std::string_view in, size_t at, std::string_view expected) {
  if (at == std::string_view::npos || in.substr(at, expected.size()) != expected)
    return std::string_view::npos;
  return at + expected.size();
}

// `key` and the string that follows it.
size_t field(std::string_view in, size_t at, std::string_view key, std::string& out) {
  at = expect(in, at, key);
  return at == std::string_view::npos ? at : read_string(in, at, out);
}

}  // namespace

bool decode_log_text_event(std::string_view line, ipc::RequestId id, LogText& out) {
  size_t at = expect(line, 0,
                     "{\"v\":" + std::to_string(ipc::kProtocolVersion) +
                         ",\"id\":" + std::to_string(id) + ",\"event\":\"text\",\"data\":{");
  at = field(line, at, "\"stack\":", out.stack);
  at = field(line, at, ",\"block\":", out.block);
  at = field(line, at, ",\"stream\":", out.stream);
  at = field(line, at, ",\"ts\":", out.ts);
  at = field(line, at, ",\"levels\":", out.levels);
  at = field(line, at, ",\"text\":", out.text);
  at = expect(line, at, "}}");
  return at == line.size();
}

bool log_text_from_json(const Json& data, LogText& out) {
  std::string* fields[] = {&out.stack, &out.block, &out.stream, &out.ts, &out.levels, &out.text};
  const char* keys[] = {"stack", "block", "stream", "ts", "levels", "text"};
  for (size_t i = 0; i < std::size(keys); ++i) {
    const Json& value = data[keys[i]];
    if (!value.is_string()) return false;
    *fields[i] = value.as_string();
  }
  return true;
}

}  // namespace stackie::cli
