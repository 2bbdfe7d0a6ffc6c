// The severity a log line announces, read from the formats development services write:
//   JSON logs           {"level":"warn"} / {"severity":"ERROR"} / pino and bunyan numbers
//                       ({"level":50}: 10 trace .. 60 fatal)
//   redis               "1:M 02 Dec 2026 10:00:00.000 # msg" (. debug, - and * info, # warn)
//   postgres, python,   the first level word in the line's first 96 bytes: "LOG:" and
//   node, most others   "INFO" info, "WARNING:" warn, "ERROR" error, "FATAL:" / "PANIC:" fatal
// and unknown when the line names none. A line is the block's own words, so this only labels
// it: nothing depends on a block telling the truth about its severities. Pure and cheap: it
// runs on the daemon's loop for every line (no allocation, a bounded look at the line).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace stackie {

enum class LogLevel { unknown = 0, debug, info, warn, error, fatal };

LogLevel classify_log_line(std::string_view text);
// "debug", "info", "warn"/"warning", "error", "fatal" (any case); nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view name);
// "debug" ... "fatal"; "" for unknown.
std::string_view to_string(LogLevel level);

// One letter a level, as `logs -f` sends the levels of a batch of lines (docs/ipc.md, the
// `text` event): '.' for unknown, then d i w e f.
inline constexpr std::string_view kLevelLetters = ".diwef";  // indexed by LogLevel
inline char letter_of(LogLevel level) {
  return kLevelLetters[static_cast<std::size_t>(level)];
}
// The level of a letter of kLevelLetters; unknown for any other byte.
inline LogLevel level_of_letter(char letter) {
  const std::size_t at = kLevelLetters.find(letter);
  return at == std::string_view::npos ? LogLevel::unknown : static_cast<LogLevel>(at);
}

}  // namespace stackie
