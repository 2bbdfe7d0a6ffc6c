// search_sandbox_logs' pure part: which log lines match (a substring or a POSIX extended
// regular expression, a stream, a time, a level) and the lines around them. Pure so the
// matching is unit-tested without a daemon. The lines are a hostile block's output: matching
// uses glibc's regexec (no backtracking on the text without back-references, no recursion
// on a line's length) and looks at the first kMatchedBytes of a line only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/json.h"
#include "base/log_level.h"

namespace stackie::cli::mcp {

inline constexpr std::size_t kMatchedBytes = 8192;

struct LogEntry {
  std::string ts;      // RFC 3339 UTC, as the daemon sends it
  std::string stream;  // stdout, stderr, stackie
  std::string text;
  LogLevel level = LogLevel::unknown;  // base/log_level.h, as the daemon read it
};
// The "line" events' data of a `logs` request, in order.
LogEntry log_entry_from_event(const Json& data);

struct SearchQuery {
  std::string pattern;
  bool regex = false;
  bool ignore_case = false;
  std::optional<LogLevel> min_level;  // lines at least this severe (unknown ones excluded)
  std::size_t context = 0;            // lines before and after each match
  std::size_t max_matches = 50;
};

// {"matches":[{"index","ts","stream","level","text","before":[...],"after":[...]}],
//  "total_matches","shown","truncated","lines_searched"}; an invalid regex is an error that
// says why.
Result<Json> search_log(const std::vector<LogEntry>& lines, const SearchQuery& query);

// grep-like text of search_log's result: "N: TS STREAM TEXT" for a match, "N- ..." around it,
// "--" between groups.
std::string search_text(const Json& result);

}  // namespace stackie::cli::mcp
