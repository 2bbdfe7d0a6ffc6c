#include "cli/mcp_log_search.h"

#include <regex.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace stackie::cli::mcp {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A compiled POSIX regex, freed on every path.
class Regex {
 public:
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  Regex() = default;
  ~Regex() {
    if (compiled_) regfree(&regex_);
  }
  Status compile(const std::string& pattern, bool ignore_case) {
    int flags = REG_EXTENDED | REG_NOSUB | (ignore_case ? REG_ICASE : 0);
    int rc = regcomp(&regex_, pattern.c_str(), flags);
    if (rc != 0) {
      char message[256];
      regerror(rc, &regex_, message, sizeof message);
      return Error{0, "pattern: not a valid extended regular expression: " + std::string(message)};
    }
    compiled_ = true;
    return {};
  }
  bool matches(const std::string& text) const {
    return regexec(&regex_, text.c_str(), 0, nullptr, 0) == 0;
  }

 private:
  regex_t regex_{};
  bool compiled_ = false;
};

Json entry_json(const LogEntry& line) {
  return Json::object(
      {{"ts", line.ts},
       {"stream", line.stream},
       {"level",
        line.level == LogLevel::unknown ? Json() : Json(std::string(to_string(line.level)))},
       {"text", line.text}});
}

}  // namespace

LogEntry log_entry_from_event(const Json& data) {
  LogEntry entry{data["ts"].string_or(""), data["stream"].string_or(""), data["text"].string_or(""),
                 LogLevel::unknown};
  // The daemon's reading of the line (base/log_level.h); a daemon too old to send one: ours.
  if (const Json* level = data.find("level"))
    entry.level = parse_log_level(level->string_or("")).value_or(LogLevel::unknown);
  else
    entry.level = classify_log_line(entry.text);
  return entry;
}

Result<Json> search_log(const std::vector<LogEntry>& lines, const SearchQuery& query) {
  Regex regex;
  if (query.regex) STACKIE_TRY(regex.compile(query.pattern, query.ignore_case));
  std::string needle = query.ignore_case ? lower(query.pattern) : query.pattern;
  auto hit = [&](const LogEntry& line) {
    if (query.min_level) {
      if (line.level == LogLevel::unknown || line.level < *query.min_level) return false;
    }
    std::string text = line.text.substr(0, kMatchedBytes);
    if (query.regex) return regex.matches(text);
    return (query.ignore_case ? lower(text) : text).find(needle) != std::string::npos;
  };
  Json matches = Json::array();
  std::size_t total = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!hit(lines[i])) continue;
    ++total;
    if (matches.size() >= query.max_matches) continue;
    Json match = entry_json(lines[i]);
    match.set("index", static_cast<int64_t>(i));
    Json before = Json::array(), after = Json::array();
    for (std::size_t j = i >= query.context ? i - query.context : 0; j < i; ++j)
      before.push_back(entry_json(lines[j]));
    for (std::size_t j = i + 1; j < lines.size() && j <= i + query.context; ++j)
      after.push_back(entry_json(lines[j]));
    match.set("before", std::move(before));
    match.set("after", std::move(after));
    matches.push_back(std::move(match));
  }
  std::size_t shown = matches.size();
  return Json::object({{"matches", std::move(matches)},
                       {"total_matches", static_cast<int64_t>(total)},
                       {"shown", static_cast<int64_t>(shown)},
                       {"truncated", total > shown},
                       {"lines_searched", static_cast<int64_t>(lines.size())}});
}

std::string search_text(const Json& result) {
  std::string out;
  auto line = [&](int64_t index, char mark, const Json& entry) {
    out += std::to_string(index) + mark + " " + entry["ts"].string_or("") + " " +
           entry["stream"].string_or("") + " " + entry["text"].string_or("") + "\n";
  };
  bool first = true;
  for (const Json& match : result["matches"].as_array()) {
    if (!first && (match["before"].size() > 0 || match["after"].size() > 0)) out += "--\n";
    first = false;
    int64_t index = match["index"].int_or(0);
    int64_t at = index - static_cast<int64_t>(match["before"].size());
    for (const Json& entry : match["before"].as_array()) line(at++, '-', entry);
    line(index, ':', match);
    at = index + 1;
    for (const Json& entry : match["after"].as_array()) line(at++, '-', entry);
  }
  out += std::to_string(result["shown"].int_or(0)) + " of " +
         std::to_string(result["total_matches"].int_or(0)) + " matching line(s) shown, " +
         std::to_string(result["lines_searched"].int_or(0)) + " searched\n";
  return out;
}

}  // namespace stackie::cli::mcp
