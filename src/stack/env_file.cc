#include "stack/env_file.h"

#include "base/fs_path.h"
#include "stack/file_kind.h"

namespace stackie {

namespace {

bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// A cursor over the text that knows its line and column (1-based, as editors count).
class Cursor {
 public:
  Cursor(std::string_view text, const std::string& path) : text_(text), path_(path) {}
  bool done() const { return at_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0';
  }
  void advance() {
    if (text_[at_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++at_;
  }
  void skip_blanks() {
    while (!done() && is_blank(peek())) advance();
  }
  void skip_line() {
    while (!done() && peek() != '\n') advance();
    if (!done()) advance();
  }
  bool starts_with(std::string_view word) const { return text_.substr(at_).starts_with(word); }
  SourceLocation where() const { return {path_, line_, column_}; }
  Error error(std::string_view message) const { return error_at(where(), message); }

 private:
  std::string_view text_;
  const std::string& path_;
  size_t at_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// After a value: blanks, then the end of the line or a comment.
Status end_of_entry(Cursor& in) {
  in.skip_blanks();
  if (in.done() || in.peek() == '\n') {
    in.skip_line();
    return {};
  }
  if (in.peek() == '#') {
    in.skip_line();
    return {};
  }
  return in.error(std::string("unexpected '") + in.peek() +
                  "' after the closing quote (a value with spaces goes inside the quotes)");
}

Result<std::string> quoted_value(Cursor& in) {
  char quote = in.peek();
  SourceLocation opened = in.where();
  in.advance();
  std::string value;
  while (true) {
    if (in.done())
      return error_at(opened, std::string("unterminated ") + (quote == '"' ? "double" : "single") +
                                  "-quoted value");
    char c = in.peek();
    if (c == quote) {
      in.advance();
      break;
    }
    if (quote == '"' && c == '\\') {
      char next = in.peek(1);
      const char* escaped = next == 'n'    ? "\n"
                            : next == 't'  ? "\t"
                            : next == 'r'  ? "\r"
                            : next == '\\' ? "\\"
                            : next == '"'  ? "\""
                            : next == '$'  ? "$"
                                           : nullptr;
      if (escaped != nullptr) {
        value += escaped;
        in.advance();
        in.advance();
        continue;
      }
    }
    if (c == '\0') return in.error("a NUL byte in a value");
    value += c;
    in.advance();
  }
  STACKIE_TRY(end_of_entry(in));
  return value;
}

std::string unquoted_value(Cursor& in) {
  std::string value;
  bool after_blank = true;  // a '#' right after '=' starts a comment too
  while (!in.done() && in.peek() != '\n') {
    char c = in.peek();
    if (c == '#' && after_blank) break;
    after_blank = is_blank(c);
    value += c;
    in.advance();
  }
  in.skip_line();
  size_t end = value.find_last_not_of(" \t\r");
  return end == std::string::npos ? "" : value.substr(0, end + 1);
}

}  // namespace

Result<std::vector<EnvFileEntry>> parse_env_file(std::string_view text, const std::string& path) {
  std::vector<EnvFileEntry> out;
  Cursor in(text, path);
  while (!in.done()) {
    in.skip_blanks();
    if (in.done()) break;
    if (in.peek() == '\n' || in.peek() == '#') {
      in.skip_line();
      continue;
    }
    if (in.starts_with("export") && is_blank(in.peek(6))) {
      for (int i = 0; i < 6; ++i) in.advance();
      in.skip_blanks();
    }
    EnvFileEntry entry;
    entry.where = in.where();
    if (!is_name_start(in.peek()))
      return in.error("expected NAME=VALUE (a NAME starts with a letter or '_')");
    while (!in.done() && is_name_char(in.peek())) {
      entry.name += in.peek();
      in.advance();
    }
    in.skip_blanks();
    if (in.peek() != '=') {
      if (in.done() || in.peek() == '\n')
        return in.error("expected '=' after '" + entry.name + "' (NAME=VALUE)");
      return in.error(std::string("unexpected '") + in.peek() + "' in the name '" + entry.name +
                      "' (expected NAME=VALUE)");
    }
    in.advance();
    in.skip_blanks();
    if (in.peek() == '"' || in.peek() == '\'') {
      STACKIE_TRY_ASSIGN(value, quoted_value(in));
      entry.value = std::move(value);
    } else {
      entry.value = unquoted_value(in);
      if (entry.value.find('\0') != std::string::npos)
        return error_at(entry.where, "a NUL byte in the value of '" + entry.name + "'");
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<EnvFileRead>> read_declared_env_files(const std::vector<EnvFileDecl>& files,
                                                         const std::string& dir,
                                                         const std::string& owner) {
  std::vector<EnvFileRead> out;
  for (const auto& file : files) {
    const std::string& text = file.path.text;
    std::string path = normalize_path(is_absolute_path(text) ? text : dir + "/" + text);
    if (!file.required && is_missing(path)) continue;
    auto content = read_env_file(path, dir);
    if (!content.ok())
      return error_at(file.path.where, "env_file of " + owner + ": " + content.error().message);
    STACKIE_TRY_ASSIGN(entries, parse_env_file(*content, path));
    out.push_back(EnvFileRead{std::move(path), std::move(entries)});
  }
  return out;
}

YamlNode literal_scalar(const EnvFileEntry& entry) {
  YamlNode node;
  node.kind = YamlNode::Kind::scalar;
  node.style = YamlNode::Style::quoted;
  node.where = entry.where;
  for (char c : entry.value) node.text += c == '$' ? std::string("$$") : std::string(1, c);
  return node;
}

}  // namespace stackie
