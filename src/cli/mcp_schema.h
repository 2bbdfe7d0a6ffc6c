// Checks a tool's arguments against the JSON Schema the tool publishes in tools/list, so the
// schema a client sees is the one enforced. Only the subset the tools use: type (object,
// string, integer, number, boolean, array), properties, required, additionalProperties: false,
// items, enum, minimum/maximum, minLength/maxLength, minItems/maxItems. A keyword outside it
// is a programmer error caught by the unit test over every tool's schema.
#pragma once

#include <string>

#include "base/error.h"
#include "base/json.h"

namespace stackie::cli::mcp {

// An error names the argument and what is wrong: "timeout_s: must be at most 300".
Status check_schema(const Json& schema, const Json& value, const std::string& where = "");

// Whether `schema` uses only the keywords check_schema knows (empty string) or which not.
std::string unknown_schema_keyword(const Json& schema);

}  // namespace stackie::cli::mcp
