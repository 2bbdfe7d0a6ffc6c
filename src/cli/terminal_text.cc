#include "cli/terminal_text.h"

namespace stackie::cli {

namespace {

// One UTF-8 character at `at`: its code point, or -1 (and length 1) for a byte that does not
// start a valid, shortest-form sequence.
struct Decoded {
  long code;
  size_t length;
};

Decoded decode(std::string_view text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80) return {lead, 1};
  size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || at + length > text.size()) return {-1, 1};
  long code = lead & (0xFF >> (length + 1));
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return {-1, 1};
    code = code << 6 | (byte(at + i) & 0x3F);
  }
  const long shortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < shortest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return {-1, 1};
  return {code, length};
}

int width_of(long code) {
  if (code >= 0x300 && code <= 0x36F) return 0;    // combining diacritical marks
  if (code >= 0x200B && code <= 0x200F) return 0;  // zero-width space, joiners, marks
  bool wide = (code >= 0x1100 && code <= 0x115F) || (code >= 0x2E80 && code <= 0xA4CF) ||
              (code >= 0xAC00 && code <= 0xD7A3) || (code >= 0xF900 && code <= 0xFAFF) ||
              (code >= 0xFE30 && code <= 0xFE4F) || (code >= 0xFF00 && code <= 0xFF60) ||
              (code >= 0xFFE0 && code <= 0xFFE6) || (code >= 0x1F300 && code <= 0x1F64F) ||
              (code >= 0x1F900 && code <= 0x1F9FF) || (code >= 0x20000 && code <= 0x3FFFD);
  return wide ? 2 : 1;
}

bool unsafe(long code) {
  return code < 0 || code < 0x20 || code == 0x7F || (code >= 0x80 && code <= 0x9F) ||
         (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    Decoded c = decode(text, at);
    if (c.code == '\t')
      out += ' ';
    else if (unsafe(c.code))
      out += '?';
    else
      out.append(text.substr(at, c.length));
    at += c.length;
  }
  return out;
}

std::string terminal_safe_json(std::string_view json) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(json.size());
  for (size_t at = 0; at < json.size();) {
    Decoded c = decode(json, at);
    if (c.code >= 0x20 && unsafe(c.code)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(c.code >> shift) & 0xF];
    } else {
      out.append(json.substr(at, c.length));
    }
    at += c.length;
  }
  return out;
}

size_t display_width(std::string_view text) {
  size_t width = 0;
  for (size_t at = 0; at < text.size();) {
    Decoded c = decode(text, at);
    width += static_cast<size_t>(c.code < 0 ? 1 : width_of(c.code));
    at += c.length;
  }
  return width;
}

std::string fit(std::string_view text, size_t width) {
  std::string out;
  size_t used = 0;
  for (size_t at = 0; at < text.size();) {
    Decoded c = decode(text, at);
    size_t w = static_cast<size_t>(c.code < 0 ? 1 : width_of(c.code));
    if (used + w > width) break;
    out.append(text.substr(at, c.length));
    used += w;
    at += c.length;
  }
  out.append(width - used, ' ');
  return out;
}

std::string terminal_safe_lines(std::string_view text) {
  std::string out;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += terminal_safe(text.substr(start, end - start));
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace stackie::cli
