#include "cli/mcp_schema.h"

#include <array>

namespace stackie::cli::mcp {

namespace {

Error at(const std::string& where, const std::string& message) {
  return Error{0, (where.empty() ? "arguments" : where) + ": " + message};
}

bool has_type(const Json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_int();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_bool();
  if (type == "array") return value.is_array();
  return false;
}

std::string child(const std::string& where, const std::string& name) {
  return where.empty() ? name : where + "." + name;
}

}  // namespace

Status check_schema(const Json& schema, const Json& value, const std::string& where) {
  const std::string type = schema["type"].string_or("");
  if (!type.empty() && !has_type(value, type)) {
    bool vowel = type == "object" || type == "integer" || type == "array";
    return at(where, std::string(vowel ? "must be an " : "must be a ") + type);
  }
  if (const Json* choices = schema.find("enum")) {
    bool found = false;
    std::string listed;
    for (const Json& choice : choices->as_array()) {
      found = found || choice == value;
      listed += (listed.empty() ? "" : ", ") + to_json(choice);
    }
    if (!found) return at(where, "must be one of " + listed);
  }
  if (value.is_number()) {
    if (schema["minimum"].is_number() && value.as_double() < schema["minimum"].as_double())
      return at(where, "must be at least " + to_json(schema["minimum"]));
    if (schema["maximum"].is_number() && value.as_double() > schema["maximum"].as_double())
      return at(where, "must be at most " + to_json(schema["maximum"]));
  }
  if (value.is_string()) {
    auto length = static_cast<int64_t>(value.as_string().size());
    if (length < schema["minLength"].int_or(0))
      return at(where, value.as_string().empty() ? "must not be empty" : "is too short");
    if (schema["maxLength"].is_int() && length > schema["maxLength"].as_int())
      return at(where, "must be at most " + to_json(schema["maxLength"]) + " bytes");
  }
  if (value.is_array()) {
    auto count = static_cast<int64_t>(value.size());
    if (count < schema["minItems"].int_or(0))
      return at(where, "must have at least " + to_json(schema["minItems"]) + " item(s)");
    if (schema["maxItems"].is_int() && count > schema["maxItems"].as_int())
      return at(where, "must have at most " + to_json(schema["maxItems"]) + " items");
    if (const Json* items = schema.find("items"))
      for (size_t i = 0; i < value.size(); ++i)
        STACKIE_TRY(check_schema(*items, value.at(i), where + "[" + std::to_string(i) + "]"));
  }
  if (value.is_object()) {
    const Json& properties = schema["properties"];
    if (schema["required"].is_array())
      for (const Json& name : schema["required"].as_array())
        if (!value.contains(name.as_string()))
          return at(child(where, name.as_string()), "is required");
    for (const auto& [name, member] : value.as_object()) {
      const Json* property = properties.find(name);
      if (!property) {
        if (schema["additionalProperties"].bool_or(true)) continue;
        return at(child(where, name), "is not an argument of this tool");
      }
      STACKIE_TRY(check_schema(*property, member, child(where, name)));
    }
  }
  return {};
}

std::string unknown_schema_keyword(const Json& schema) {
  static constexpr std::array<std::string_view, 15> kKnown = {
      "type",      "properties",  "required", "additionalProperties",
      "items",     "enum",        "minimum",  "maximum",
      "minLength", "maxLength",   "minItems", "maxItems",
      "default",   "description", "title"};
  if (!schema.is_object()) return "(not an object)";
  for (const auto& [key, value] : schema.as_object()) {
    bool known = false;
    for (std::string_view k : kKnown) known = known || key == k;
    if (!known) return key;
    if (key == "properties")
      for (const auto& [name, property] : value.as_object())
        if (auto bad = unknown_schema_keyword(property); !bad.empty()) return bad;
    if (key == "items")
      if (auto bad = unknown_schema_keyword(value); !bad.empty()) return bad;
  }
  return "";
}

}  // namespace stackie::cli::mcp
