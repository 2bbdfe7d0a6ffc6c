#include "base/duration.h"

#include <utility>

namespace stackie {
namespace {

ParsedDuration fail(std::size_t offset, std::string message) {
  return ParsedDuration{0, std::move(message), offset};
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The unit at text[pos] in milliseconds and its length, or {0, 0}. "ms" before "m".
std::pair<std::int64_t, std::size_t> unit_at(std::string_view text, std::size_t pos) {
  if (text.substr(pos, 2) == "ms") return {1, 2};
  if (pos >= text.size()) return {0, 0};
  switch (text[pos]) {
    case 's': return {1000, 1};
    case 'm': return {60'000, 1};
    case 'h': return {3'600'000, 1};
    case 'd': return {86'400'000, 1};
    default: return {0, 0};
  }
}

}  // namespace

ParsedDuration parse_duration(std::string_view text, DurationOptions options) {
  static const std::string kTooLong = "longer than 100 years (36500d)";
  if (text.empty()) return fail(0, "empty");
  std::int64_t total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    if (!is_digit(text[pos])) return fail(pos, "expected a number");
    std::int64_t number = 0;
    for (; pos < text.size() && is_digit(text[pos]); ++pos) {
      number = number * 10 + (text[pos] - '0');
      if (number > kMaxDurationMs) return fail(start, kTooLong);  // before it can overflow
    }
    auto [unit, length] = unit_at(text, pos);
    if (length == 0) {
      if (pos == text.size() && start == 0 && options.bare_number_is_seconds) {
        unit = 1000;
      } else if (pos == text.size()) {
        return fail(pos, "a unit (ms, s, m, h or d) is needed after the number");
      } else {
        const char c = text[pos];
        const bool printable = c > ' ' && c < 0x7f;
        return fail(pos, (printable ? std::string("unknown unit '") + c + "'" : "unknown unit") +
                             " (ms, s, m, h or d)");
      }
    }
    if (number > (kMaxDurationMs - total) / unit) return fail(start, kTooLong);
    total += number * unit;
    pos += length;
  }
  return ParsedDuration{total, {}, 0};
}

}  // namespace stackie
