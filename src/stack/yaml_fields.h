// Typed reads from a YamlNode with one-line, positioned errors ("FILE:LINE:COL: 'port' must be
// a number, got 'abc'"), and the "did you mean" hint for misspelt names.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "stack/yaml_node.h"

namespace stackie {

// Levenshtein distance; small inputs only (field and block names).
size_t edit_distance(std::string_view a, std::string_view b);

// "; did you mean 'x'?" for the closest candidate within a distance that is plausibly a typo,
// else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Every key of `map` must be one of `known`; otherwise "unknown field 'K' in CONTEXT; did you
// mean ...?" at the key.
Status check_fields(const YamlNode& map, std::initializer_list<std::string_view> known,
                    std::string_view context);

// `node` must be of `kind`: "'WHAT' must be a map, got a list".
Status expect_kind(const YamlNode& node, YamlNode::Kind kind, std::string_view what);

Result<std::string> read_string(const YamlNode& node, std::string_view what);
Result<int> read_int(const YamlNode& node, std::string_view what);
Result<bool> read_bool(const YamlNode& node, std::string_view what);
// A list of strings; a single string is a one-element list when `allow_single` is true.
Result<std::vector<std::string>> read_string_list(const YamlNode& node, std::string_view what,
                                                  bool allow_single = false);
// Like read_string_list but keeps each element's node (for interpolation positions).
Result<std::vector<YamlNode>> read_scalar_list(const YamlNode& node, std::string_view what);
// A map of NAME: scalar, in file order, values kept as nodes.
Result<std::vector<std::pair<std::string, YamlNode>>> read_scalar_map(const YamlNode& node,
                                                                      std::string_view what);
// A duration (base/duration.h: "500ms", "2s", "1h30m") -> milliseconds; an error names the
// character where the text stops being one.
Result<long long> read_duration_ms(const YamlNode& node, std::string_view what);

}  // namespace stackie
