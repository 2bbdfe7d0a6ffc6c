#include "stack/yaml_fields.h"

#include <algorithm>
#include <charconv>

#include "base/duration.h"

namespace stackie {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions ("prot" -> "port" is
  // one edit), the commonest typo.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  // A third of the word's length (at least 1, at most 3) keeps hints to real typos.
  size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = &candidate;
    }
  }
  if (!best) return "";
  return "; did you mean '" + *best + "'?";
}

Status check_fields(const YamlNode& map, std::initializer_list<std::string_view> known,
                    std::string_view context) {
  for (const auto& [key, value] : map.entries) {
    if (std::find(known.begin(), known.end(), key.text) != known.end()) continue;
    std::vector<std::string> names(known.begin(), known.end());
    return error_at(key.where, "unknown field '" + key.text + "' in " + std::string(context) +
                                   did_you_mean(key.text, names));
  }
  return {};
}

Status expect_kind(const YamlNode& node, YamlNode::Kind kind, std::string_view what) {
  if (node.kind == kind) return {};
  std::string got(describe(node.kind));
  if (node.is_scalar()) got = "'" + node.text + "'";
  return error_at(node.where, "'" + std::string(what) + "' must be " + std::string(describe(kind)) +
                                  ", got " + got);
}

Result<std::string> read_string(const YamlNode& node, std::string_view what) {
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::scalar, what));
  return node.text;
}

Result<int> read_int(const YamlNode& node, std::string_view what) {
  if (!node.is_scalar() || node.style != YamlNode::Style::plain)
    return error_at(node.where, "'" + std::string(what) + "' must be a number, got " +
                                    (node.is_scalar() ? "'" + node.text + "'"
                                                      : std::string(describe(node.kind))));
  int value = 0;
  const char* begin = node.text.data();
  const char* end = begin + node.text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end)
    return error_at(node.where,
                    "'" + std::string(what) + "' must be a number, got '" + node.text + "'");
  return value;
}

Result<bool> read_bool(const YamlNode& node, std::string_view what) {
  if (node.is_scalar() && node.style == YamlNode::Style::plain) {
    if (node.text == "true" || node.text == "yes") return true;
    if (node.text == "false" || node.text == "no") return false;
  }
  return error_at(node.where, "'" + std::string(what) + "' must be true or false, got " +
                                  (node.is_scalar() ? "'" + node.text + "'"
                                                    : std::string(describe(node.kind))));
}

Result<std::vector<YamlNode>> read_scalar_list(const YamlNode& node, std::string_view what) {
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::sequence, what));
  for (const auto& item : node.items)
    if (!item.is_scalar())
      return error_at(item.where, "each entry of '" + std::string(what) +
                                      "' must be a string, got " +
                                      std::string(describe(item.kind)));
  return node.items;
}

Result<std::vector<std::string>> read_string_list(const YamlNode& node, std::string_view what,
                                                  bool allow_single) {
  if (allow_single && node.is_scalar()) return std::vector<std::string>{node.text};
  STACKIE_TRY_ASSIGN(items, read_scalar_list(node, what));
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.text);
  return out;
}

Result<std::vector<std::pair<std::string, YamlNode>>> read_scalar_map(const YamlNode& node,
                                                                      std::string_view what) {
  std::vector<std::pair<std::string, YamlNode>> out;
  if (node.is_null()) return out;
  STACKIE_TRY(expect_kind(node, YamlNode::Kind::map, what));
  for (const auto& [key, value] : node.entries) {
    if (!value.is_scalar() && !value.is_null())
      return error_at(value.where, "'" + std::string(what) + "." + key.text +
                                       "' must be a string, got " +
                                       std::string(describe(value.kind)));
    YamlNode scalar = value;
    scalar.kind = YamlNode::Kind::scalar;  // an empty value is the empty string here
    out.emplace_back(key.text, std::move(scalar));
  }
  return out;
}

Result<long long> read_duration_ms(const YamlNode& node, std::string_view what) {
  const std::string expected =
      "'" + std::string(what) + "' must be a duration such as 500ms, 2s, 1m or 1h30m, got ";
  if (!node.is_scalar()) return error_at(node.where, expected + std::string(describe(node.kind)));
  const ParsedDuration parsed = parse_duration(node.text);
  if (!parsed.ok())
    return error_at(node.at_offset(parsed.error_offset),
                    expected + "'" + node.text + "': " + parsed.error);
  return parsed.ms;
}

}  // namespace stackie
