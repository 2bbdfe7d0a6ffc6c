// `${kind.name}` references in stack and block strings (DESIGN.md §4): vars, serves, paths,
// secrets (two parts) and consumes (three: `${consumes.X.HOST}`, `${consumes.X.PORT}`; or
// `${consumes.ALL}`: every entry as "NAME=HOST:PORT", space-separated, in declaration order).
// `$$` is a literal '$'; a '$' not followed by '{' or '$' is literal too. An unknown reference
// or an unterminated `${` is an error at its exact position, never an empty string.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "stack/yaml_node.h"

namespace stackie {

struct Reference {
  std::string kind;                // "vars", "serves", "paths", "secrets", "consumes"
  std::vector<std::string> parts;  // after the kind: {"user"}, {"db", "PORT"} or {"ALL"}
  std::string text;                // "${vars.user}", for messages
  SourceLocation where;            // the '$'
};

// The result of expanding a string; `secret` when any part came from a secret, so that
// output can mask it.
struct Expanded {
  std::string text;
  bool secret = false;
};

using ReferenceResolver = std::function<Result<Expanded>(const Reference&)>;

// Expands `scalar.text`; positions in errors come from the node.
Result<Expanded> interpolate(const YamlNode& scalar, const ReferenceResolver& resolve);

// True when `text` holds `${` (after `$$` escapes): used to refuse references where none may be.
bool has_reference(std::string_view text);

}  // namespace stackie
