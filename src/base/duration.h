// Durations as people write them, in milliseconds: a number with a unit (ms, s, m, h, d) or a
// sum of such parts ("1h30m"). The one parser behind stack files (stop_timeout, health.*) and
// the command line (logs --since), so both accept the same text and refuse it the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stackie {

// The longest duration accepted: 100 years. Far past any sensible timeout, and far from where a
// caller converting to std::chrono::nanoseconds (292 years) or adding it to a clock overflows.
inline constexpr std::int64_t kMaxDurationMs = 36500LL * 86'400'000;

struct DurationOptions {
  // "45" means 45 s (the command line); a stack file writes its unit.
  bool bare_number_is_seconds = false;
};

struct ParsedDuration {
  std::int64_t ms = 0;
  std::string error;             // empty when the text is a duration, else what is wrong
  std::size_t error_offset = 0;  // the byte of the text where it is wrong
  bool ok() const { return error.empty(); }
};

// Pure: no clock, no locale. Refuses an empty text, a sign, spaces, an unknown unit, a part
// without a unit (except a bare number alone, when the options allow it) and anything longer
// than kMaxDurationMs.
ParsedDuration parse_duration(std::string_view text, DurationOptions options = {});

}  // namespace stackie
