#include "cli/cli_time.h"

#include <ctime>

#include "base/duration.h"

namespace stackie::cli {

namespace {

// Reads exactly `width` digits at `pos`; advances `pos`.
std::optional<int> digits(std::string_view text, size_t& pos, size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  int value = 0;
  for (size_t i = 0; i < width; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  pos += width;
  return value;
}

bool take(std::string_view text, size_t& pos, char c) {
  if (pos < text.size() && text[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

bool is_leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to the given civil date (proleptic Gregorian), without timegm's
// dependence on the C library.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// YYYY-MM-DD[(T|t| )HH:MM[:SS[.fff]][Z|±HH:MM]]
std::optional<int64_t> parse_absolute(std::string_view text) {
  size_t pos = 0;
  auto year = digits(text, pos, 4);
  if (!year || !take(text, pos, '-')) return std::nullopt;
  auto month = digits(text, pos, 2);
  if (!month || !take(text, pos, '-')) return std::nullopt;
  auto day = digits(text, pos, 2);
  if (!day || *month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month))
    return std::nullopt;
  int hour = 0, minute = 0, second = 0, millis = 0;
  std::optional<int> offset_minutes;  // nullopt: local time
  if (pos < text.size()) {
    if (!take(text, pos, 'T') && !take(text, pos, 't') && !take(text, pos, ' '))
      return std::nullopt;
    auto h = digits(text, pos, 2);
    if (!h || !take(text, pos, ':')) return std::nullopt;
    auto m = digits(text, pos, 2);
    if (!m) return std::nullopt;
    hour = *h;
    minute = *m;
    if (take(text, pos, ':')) {
      auto s = digits(text, pos, 2);
      if (!s) return std::nullopt;
      second = *s;
      if (take(text, pos, '.')) {
        size_t start = pos;
        int scale = 100;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
          millis += (text[pos] - '0') * scale;
          scale /= 10;
          ++pos;
        }
        if (pos == start) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    if (take(text, pos, 'Z') || take(text, pos, 'z')) {
      offset_minutes = 0;
    } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      int sign = text[pos++] == '-' ? -1 : 1;
      auto oh = digits(text, pos, 2);
      if (!oh || !take(text, pos, ':')) return std::nullopt;
      auto om = digits(text, pos, 2);
      if (!om || *oh > 23 || *om > 59) return std::nullopt;
      offset_minutes = sign * (*oh * 60 + *om);
    }
    if (pos != text.size()) return std::nullopt;
  }
  if (second == 60) second = 59;  // a leap second: close enough for a log filter
  if (offset_minutes) {
    int64_t seconds = days_from_civil(*year, *month, *day) * 86400 + hour * 3600 + minute * 60 +
                      second - int64_t{*offset_minutes} * 60;
    return seconds * 1000 + millis;
  }
  std::tm local{};
  local.tm_year = *year - 1900;
  local.tm_mon = *month - 1;
  local.tm_mday = *day;
  local.tm_hour = hour;
  local.tm_min = minute;
  local.tm_sec = second;
  local.tm_isdst = -1;  // let the zone rules decide
  std::time_t seconds = std::mktime(&local);
  if (seconds == static_cast<std::time_t>(-1) && local.tm_year != 69) return std::nullopt;
  return int64_t{seconds} * 1000 + millis;
}

}  // namespace

std::optional<int64_t> parse_since(std::string_view text, int64_t now_ms) {
  if (const ParsedDuration duration = parse_duration(text, {.bare_number_is_seconds = true});
      duration.ok())
    return now_ms - duration.ms;
  return parse_absolute(text);
}

}  // namespace stackie::cli
