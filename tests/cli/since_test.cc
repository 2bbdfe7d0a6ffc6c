// `stackie logs --since`: durations and absolute times, and what is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "cli/cli_time.h"

namespace stackie::cli {
namespace {

constexpr int64_t kNow = 1'796'205'600'000;  // 2026-12-02T10:00:00Z

class SinceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz ? std::optional<std::string>(tz) : std::nullopt;
  }
  void TearDown() override {
    if (saved_)
      ::setenv("TZ", saved_->c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }
  static void zone(const char* tz) {
    ::setenv("TZ", tz, 1);
    ::tzset();
  }
  std::optional<std::string> saved_;
};

TEST_F(SinceTest, DurationsCountBackFromNow) {
  EXPECT_EQ(parse_since("5m", kNow), kNow - 300'000);
  EXPECT_EQ(parse_since("2h", kNow), kNow - 7'200'000);
  EXPECT_EQ(parse_since("30s", kNow), kNow - 30'000);
  EXPECT_EQ(parse_since("250ms", kNow), kNow - 250);
  EXPECT_EQ(parse_since("1d", kNow), kNow - 86'400'000);
  EXPECT_EQ(parse_since("1h30m", kNow), kNow - 5'400'000);
  EXPECT_EQ(parse_since("45", kNow), kNow - 45'000);  // bare seconds
}

TEST_F(SinceTest, Rfc3339WithAZoneIsExact) {
  EXPECT_EQ(parse_since("2026-12-02T10:00:00Z", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02t10:00:00z", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02T10:00:00.250Z", 0), kNow + 250);
  EXPECT_EQ(parse_since("2026-12-02T11:30:00+01:30", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02T05:00:00-05:00", 0), kNow);
  EXPECT_EQ(parse_since("1970-01-01T00:00:00Z", 0), 0);
  EXPECT_EQ(parse_since("2024-02-29T00:00:00Z", 0), 1'709'164'800'000);  // a leap day
}

TEST_F(SinceTest, TimesWithoutAZoneAreLocal) {
  zone("UTC0");
  EXPECT_EQ(parse_since("2026-12-02 10:00:00", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02 10:00", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02T10:00:00", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02", 0), kNow - 10 * 3'600'000);  // midnight
  zone("CET-1CEST,M3.5.0,M10.5.0/3");                              // UTC+1 in December
  EXPECT_EQ(parse_since("2026-12-02 11:00:00", 0), kNow);
  EXPECT_EQ(parse_since("2026-12-02", 0), kNow - 11 * 3'600'000);
  zone("CET-1CEST,M3.5.0,M10.5.0/3");  // UTC+2 in summer: the zone's rules decide
  EXPECT_EQ(parse_since("2026-07-01 02:00", 0), parse_since("2026-07-01T00:00:00Z", 0));
}

TEST_F(SinceTest, RefusesWhatIsNeitherADurationNorATime) {
  for (const char* bad :
       {"", "5x", "m5", "-5m", "1h30", "yesterday", "2026-13-01", "2026-02-30", "2025-02-29",
        "2026-12-02T25:00:00Z", "2026-12-02T10:60", "2026-12-02T10:00:00+0100", "2026-12-02T10",
        "2026-12-2", "2026-12-02T10:00:00Zjunk", "2026-12-02T10:00:00.Z", "26-12-02"})
    EXPECT_FALSE(parse_since(bad, kNow).has_value()) << bad;
}

}  // namespace
}  // namespace stackie::cli
