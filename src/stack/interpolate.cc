#include "stack/interpolate.h"

namespace stackie {

namespace {

bool is_reference_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

Result<Reference> parse_reference(std::string_view body, const SourceLocation& where) {
  Reference ref;
  ref.text = "${" + std::string(body) + "}";
  ref.where = where;
  if (body.empty()) return error_at(where, "empty reference '${}'");
  for (char c : body)
    if (!is_reference_char(c))
      return error_at(
          where, "invalid character '" + std::string(1, c) + "' in reference '" + ref.text + "'");
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find('.', start);
    if (end == std::string_view::npos) end = body.size();
    parts.emplace_back(body.substr(start, end - start));
    start = end + 1;
  }
  for (const auto& part : parts)
    if (part.empty()) return error_at(where, "malformed reference '" + ref.text + "'");
  ref.kind = parts.front();
  ref.parts.assign(parts.begin() + 1, parts.end());
  if (ref.kind == "consumes") {
    // ${consumes.ALL}: every entry at once, for a definition that cannot know the names a
    // stack will give (a proxy's routes). Upper case, as HOST and PORT: no consumes name is.
    bool all = ref.parts.size() == 1 && ref.parts[0] == "ALL";
    if (!all && (ref.parts.size() != 2 || (ref.parts[1] != "HOST" && ref.parts[1] != "PORT")))
      return error_at(where, "reference '" + ref.text +
                                 "' must be ${consumes.NAME.HOST}, ${consumes.NAME.PORT} or "
                                 "${consumes.ALL}");
  } else if (ref.kind == "vars" || ref.kind == "serves" || ref.kind == "paths" ||
             ref.kind == "secrets") {
    if (ref.parts.size() != 1)
      return error_at(where, "reference '" + ref.text + "' must be ${" + ref.kind + ".NAME}");
  } else {
    return error_at(where, "unknown reference '" + ref.text +
                               "' (references are ${vars.X}, ${serves.X}, ${paths.X}, "
                               "${secrets.X}, ${consumes.X.HOST|PORT}, ${consumes.ALL})");
  }
  return ref;
}

}  // namespace

bool has_reference(std::string_view text) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '$') continue;
    if (text[i + 1] == '$') {
      ++i;
      continue;
    }
    if (text[i + 1] == '{') return true;
  }
  return false;
}

Result<Expanded> interpolate(const YamlNode& scalar, const ReferenceResolver& resolve) {
  const std::string& text = scalar.text;
  Expanded out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c != '$' || i + 1 >= text.size()) {
      out.text += c;
      ++i;
      continue;
    }
    if (text[i + 1] == '$') {
      out.text += '$';
      i += 2;
      continue;
    }
    if (text[i + 1] != '{') {
      out.text += c;
      ++i;
      continue;
    }
    size_t close = text.find('}', i + 2);
    SourceLocation where = scalar.at_offset(i);
    if (close == std::string::npos) return error_at(where, "unterminated '${' (missing '}')");
    STACKIE_TRY_ASSIGN(ref,
                       parse_reference(std::string_view(text).substr(i + 2, close - i - 2), where));
    STACKIE_TRY_ASSIGN(value, resolve(ref));
    out.text += value.text;
    out.secret = out.secret || value.secret;
    i = close + 1;
  }
  return out;
}

}  // namespace stackie
