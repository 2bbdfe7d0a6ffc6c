// base/duration.h: the one duration parser of stack files and the command line.
#include "base/duration.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace stackie {
namespace {

std::int64_t ms(std::string_view text, DurationOptions options = {}) {
  const ParsedDuration parsed = parse_duration(text, options);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.error;
  return parsed.ms;
}

// The error and its offset, as "OFFSET: message".
std::string error(std::string_view text, DurationOptions options = {}) {
  const ParsedDuration parsed = parse_duration(text, options);
  EXPECT_FALSE(parsed.ok()) << text << " parsed as " << parsed.ms << " ms";
  return std::to_string(parsed.error_offset) + ": " + parsed.error;
}

TEST(Duration, EveryUnitAndSums) {
  EXPECT_EQ(ms("250ms"), 250);
  EXPECT_EQ(ms("30s"), 30'000);
  EXPECT_EQ(ms("5m"), 300'000);
  EXPECT_EQ(ms("2h"), 7'200'000);
  EXPECT_EQ(ms("1d"), 86'400'000);
  EXPECT_EQ(ms("0s"), 0);
  EXPECT_EQ(ms("1h30m"), 5'400'000);
  EXPECT_EQ(ms("1m500ms"), 60'500);
  EXPECT_EQ(ms("1d2h3m4s5ms"), 93'784'005);
  EXPECT_EQ(ms("007s"), 7'000);
}

TEST(Duration, ABareNumberIsSecondsOnlyWhenAllowedAndAlone) {
  EXPECT_EQ(ms("45", {.bare_number_is_seconds = true}), 45'000);
  EXPECT_EQ(error("45"), "2: a unit (ms, s, m, h or d) is needed after the number");
  EXPECT_EQ(error("1h30", {.bare_number_is_seconds = true}),
            "4: a unit (ms, s, m, h or d) is needed after the number");
}

TEST(Duration, RefusalsSayWhereAndWhat) {
  EXPECT_EQ(error(""), "0: empty");
  EXPECT_EQ(error("-5m"), "0: expected a number");
  EXPECT_EQ(error("m5"), "0: expected a number");
  EXPECT_EQ(error("5 minutes"), "1: unknown unit (ms, s, m, h or d)");
  EXPECT_EQ(error("5x"), "1: unknown unit 'x' (ms, s, m, h or d)");
  EXPECT_EQ(error("1h 30m"), "2: expected a number");
  EXPECT_EQ(error("1hh"), "2: expected a number");
  EXPECT_EQ(error("1.5h"), "1: unknown unit '.' (ms, s, m, h or d)");
}

TEST(Duration, OverflowIsAnErrorAtTheNumberThatCausesIt) {
  EXPECT_EQ(ms("36500d"), kMaxDurationMs);
  EXPECT_EQ(error("9999999999999999h"), "0: longer than 100 years (36500d)");
  EXPECT_EQ(error("36500d1ms"), "6: longer than 100 years (36500d)");
  EXPECT_EQ(error("1s99999999999999999999999999999s"), "2: longer than 100 years (36500d)");
  // Each part alone fits; their sum does not (a per-part check would wrap here).
  EXPECT_EQ(error("36000d36000d"), "6: longer than 100 years (36500d)");
}

}  // namespace
}  // namespace stackie
