// A YAML document as a plain tree in which every node knows where it came from (file, line,
// column), so every later error can say FILE:LINE:COL. The only libyaml user is yaml_node.cc;
// nothing of libyaml leaks out of it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

namespace stackie {

struct YamlNode {
  enum class Kind { null, scalar, map, sequence };
  enum class Style { plain, quoted, block };  // how a scalar was written; affects columns

  // Special members declared here and the destructor defined in yaml_node.cc: the node holds
  // pairs of itself, which clang (with libstdc++) cannot instantiate while the type is still
  // incomplete when the destructor is implicit (the fuzz build, tests/fuzz, uses clang).
  YamlNode() = default;
  YamlNode(const YamlNode&) = default;
  YamlNode(YamlNode&&) noexcept = default;
  YamlNode& operator=(const YamlNode&) = default;
  YamlNode& operator=(YamlNode&&) noexcept = default;
  ~YamlNode();

  Kind kind = Kind::null;
  Style style = Style::plain;
  SourceLocation where;
  std::string text;                                    // scalar
  std::vector<std::pair<YamlNode, YamlNode>> entries;  // map: key (a scalar) and value
  std::vector<YamlNode> items;                         // sequence

  bool is_null() const { return kind == Kind::null; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_map() const { return kind == Kind::map; }
  bool is_sequence() const { return kind == Kind::sequence; }
  // The value under `key` in a map, or nullptr.
  const YamlNode* find(std::string_view key) const;
  // Where character `offset` of a single-line scalar is (for errors inside a string).
  SourceLocation at_offset(size_t offset) const;
};

// "a map", "a list", "a string", "nothing": for "expected X, got Y" messages.
std::string_view describe(YamlNode::Kind kind);

// Parses one YAML document. Refuses tabs in indentation, duplicate keys, non-scalar keys and
// multiple documents, each with the position of the problem. An empty document is a null node.
Result<YamlNode> parse_yaml(std::string_view text, const std::string& file_name);

// Reads and parses a file; an unreadable file is "FILE: cannot read: REASON".
Result<YamlNode> parse_yaml_file(const std::string& path);

// Reads a whole file into a string ("FILE: cannot read: REASON" on failure).
Result<std::string> read_text_file(const std::string& path);

}  // namespace stackie
