// `stackie logs --since`: a point in time from what a user types — a duration back from now
// (30s, 5m, 1h30m) or an absolute time (RFC 3339, a local "YYYY-MM-DD HH:MM[:SS]", a date).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stackie::cli {

// Unix milliseconds, or nullopt when `text` is none of the accepted forms. `now_ms` is the
// clock for durations (base/duration.h; a bare number is seconds); times without a zone are
// read in the local time zone (TZ).
std::optional<int64_t> parse_since(std::string_view text, int64_t now_ms);

}  // namespace stackie::cli
