// libyaml's event parser turned into a YamlNode tree. libyaml reports marks 0-based; we store
// them 1-based because that is what editors and compilers show.
#include "stack/yaml_node.h"

#include <yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace stackie {

YamlNode::~YamlNode() = default;

const YamlNode* YamlNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.text == key) return &v;
  return nullptr;
}

SourceLocation YamlNode::at_offset(size_t offset) const {
  SourceLocation out = where;
  // Only a plain or quoted single-line scalar maps offsets to columns reliably; elsewhere the
  // start of the scalar is the best honest answer.
  if (style == Style::block || text.find('\n') != std::string::npos) return out;
  out.column += static_cast<int>(offset) + (style == Style::quoted ? 1 : 0);
  return out;
}

std::string_view describe(YamlNode::Kind kind) {
  switch (kind) {
    case YamlNode::Kind::null: return "nothing";
    case YamlNode::Kind::scalar: return "a string";
    case YamlNode::Kind::map: return "a map";
    case YamlNode::Kind::sequence: return "a list";
  }
  return "?";
}

namespace {

struct ParserDeleter {
  void operator()(yaml_parser_t* parser) const {
    yaml_parser_delete(parser);
    delete parser;
  }
};

struct EventGuard {
  yaml_event_t event{};
  ~EventGuard() { yaml_event_delete(&event); }
};

SourceLocation mark_to_location(const std::string& file, const yaml_mark_t& mark) {
  return {file, static_cast<int>(mark.line) + 1, static_cast<int>(mark.column) + 1};
}

// libyaml's own message for a tab in indentation ("found character that cannot start any
// token") says nothing useful. When parsing fails, the first line up to the failure whose
// indentation holds a tab is named instead. Only on failure: a tab after the indentation of a
// block scalar (a Makefile in `text: |`) is legitimate content.
std::optional<SourceLocation> tab_in_indentation(std::string_view text, const std::string& file,
                                                 int last_line) {
  int line = 1;
  size_t pos = 0;
  while (pos <= text.size() && line <= last_line) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    for (size_t i = pos; i < end; ++i) {
      if (text[i] == '\t') return SourceLocation{file, line, static_cast<int>(i - pos) + 1};
      if (text[i] != ' ') break;
    }
    pos = end + 1;
    ++line;
  }
  return std::nullopt;
}

// Limits on what a document may expand to. A stack file is a few hundred nodes; these stop a
// hostile one before it costs memory or stack: nesting is recursion here (and in the node's
// destructor), and an alias copies its anchor's tree, so nine anchors of ten aliases each
// ("billion laughs") would otherwise ask for 10^9 nodes from a few hundred bytes.
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 100'000;  // counted after aliases expand

class TreeBuilder {
 public:
  TreeBuilder(yaml_parser_t* parser, std::string_view text, const std::string& file)
      : parser_(parser), text_(text), file_(file) {}

  Result<YamlNode> build() {
    YamlNode root;
    root.where = {file_, 1, 1};
    int documents = 0;
    for (;;) {
      EventGuard guard;
      STACKIE_TRY(next(guard.event));
      yaml_event_t& event = guard.event;
      if (event.type == YAML_STREAM_END_EVENT) break;
      if (event.type == YAML_DOCUMENT_START_EVENT) {
        if (++documents > 1)
          return error_at(mark_to_location(file_, event.start_mark),
                          "more than one YAML document ('---'); a file holds exactly one");
        continue;
      }
      if (event.type == YAML_DOCUMENT_END_EVENT || event.type == YAML_STREAM_START_EVENT) continue;
      STACKIE_TRY_ASSIGN(node, build_node(event));
      root = std::move(node);
    }
    return root;
  }

 private:
  Status next(yaml_event_t& event) {
    if (yaml_parser_parse(parser_, &event)) return {};
    std::string message = "YAML syntax error: ";
    message += parser_->problem ? parser_->problem : "malformed input";
    if (parser_->context) {
      message += " (";
      message += parser_->context;
      message += ')';
    }
    SourceLocation where = mark_to_location(file_, parser_->problem_mark);
    if (auto tab = tab_in_indentation(text_, file_, where.line))
      return error_at(*tab, "tab character in indentation; YAML indents with spaces");
    return error_at(where, message);
  }

  // An anchored node and what copying it costs: its nodes (aliases inside it expanded) and
  // its height.
  struct Anchor {
    YamlNode node;
    std::size_t nodes = 0;
    int height = 0;
  };

  // Counts a node (or an alias's copy of `count` nodes) against kMaxNodes.
  Status count_nodes(std::size_t count, const SourceLocation& where) {
    nodes_ += count;
    if (nodes_ > kMaxNodes)
      return error_at(where, "the document holds more than " + std::to_string(kMaxNodes) +
                                 " nodes once its aliases are expanded");
    return {};
  }

  Status check_depth(int height, const SourceLocation& where) {
    deepest_ = std::max(deepest_, depth_ + height);
    if (depth_ + height > kMaxDepth)
      return error_at(where, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    return {};
  }

  // Builds the node of `event` and, when it is anchored, remembers it with its cost.
  Result<YamlNode> build_node(yaml_event_t& event) {
    const std::size_t nodes_before = nodes_;
    const int deepest_before = deepest_;
    deepest_ = depth_;
    Result<YamlNode> node = build_unanchored(event);
    const int height = deepest_ - depth_;
    deepest_ = std::max(deepest_before, deepest_);
    if (!node.ok()) return node;
    const yaml_char_t* anchor =
        event.type == YAML_SCALAR_EVENT           ? event.data.scalar.anchor
        : event.type == YAML_SEQUENCE_START_EVENT ? event.data.sequence_start.anchor
        : event.type == YAML_MAPPING_START_EVENT  ? event.data.mapping_start.anchor
                                                  : nullptr;
    if (anchor)
      anchors_[reinterpret_cast<const char*>(anchor)] = {*node, nodes_ - nodes_before, height};
    return node;
  }

  Result<YamlNode> build_unanchored(yaml_event_t& event) {
    YamlNode node;
    node.where = mark_to_location(file_, event.start_mark);
    if (event.type != YAML_ALIAS_EVENT) {
      STACKIE_TRY(check_depth(1, node.where));
      STACKIE_TRY(count_nodes(1, node.where));
    }
    switch (event.type) {
      case YAML_ALIAS_EVENT: {
        auto found = anchors_.find(reinterpret_cast<const char*>(event.data.alias.anchor));
        if (found == anchors_.end()) return error_at(node.where, "alias to an unknown anchor");
        // Checked before copying: the copy is what costs.
        STACKIE_TRY(check_depth(found->second.height, node.where));
        STACKIE_TRY(count_nodes(found->second.nodes, node.where));
        YamlNode copy = found->second.node;
        return copy;
      }
      case YAML_SCALAR_EVENT: {
        const auto& scalar = event.data.scalar;
        node.text.assign(reinterpret_cast<const char*>(scalar.value), scalar.length);
        bool plain = scalar.style == YAML_PLAIN_SCALAR_STYLE;
        bool quoted = scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                      scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        node.style = quoted  ? YamlNode::Style::quoted
                     : plain ? YamlNode::Style::plain
                             : YamlNode::Style::block;
        // An unquoted empty value, `~` or `null` is YAML's null; a quoted "" is a string.
        if (plain && (node.text.empty() || node.text == "~" || node.text == "null" ||
                      node.text == "Null" || node.text == "NULL"))
          node.kind = YamlNode::Kind::null;
        else
          node.kind = YamlNode::Kind::scalar;
        return node;
      }
      case YAML_SEQUENCE_START_EVENT: {
        node.kind = YamlNode::Kind::sequence;
        DepthGuard nested(depth_);
        for (;;) {
          EventGuard guard;
          STACKIE_TRY(next(guard.event));
          if (guard.event.type == YAML_SEQUENCE_END_EVENT) break;
          STACKIE_TRY_ASSIGN(item, build_node(guard.event));
          node.items.push_back(std::move(item));
        }
        return node;
      }
      case YAML_MAPPING_START_EVENT: {
        node.kind = YamlNode::Kind::map;
        DepthGuard nested(depth_);
        std::map<std::string, SourceLocation> seen;
        for (;;) {
          EventGuard key_guard;
          STACKIE_TRY(next(key_guard.event));
          if (key_guard.event.type == YAML_MAPPING_END_EVENT) break;
          STACKIE_TRY_ASSIGN(key, build_node(key_guard.event));
          if (!key.is_scalar())
            return error_at(key.where,
                            "a key must be a plain string, not " + std::string(describe(key.kind)));
          if (auto [it, inserted] = seen.emplace(key.text, key.where); !inserted)
            return error_at(key.where, "duplicate key '" + key.text + "' (first at line " +
                                           std::to_string(it->second.line) + ")");
          EventGuard value_guard;
          STACKIE_TRY(next(value_guard.event));
          STACKIE_TRY_ASSIGN(value, build_node(value_guard.event));
          node.entries.emplace_back(std::move(key), std::move(value));
        }
        return node;
      }
      default: return error_at(node.where, "unexpected YAML event");
    }
  }

  // The children of a sequence or map are one level deeper while they are built.
  struct DepthGuard {
    explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& depth_;
  };

  yaml_parser_t* parser_;
  std::string_view text_;
  const std::string& file_;
  std::map<std::string, Anchor> anchors_;
  std::size_t nodes_ = 0;  // built so far, alias copies included
  int depth_ = 0;          // of the node being built: 0 for the document's root
  int deepest_ = 0;        // the deepest level reached inside the node being built
};

}  // namespace

Result<YamlNode> parse_yaml(std::string_view text, const std::string& file_name) {
  std::unique_ptr<yaml_parser_t, ParserDeleter> parser(new yaml_parser_t{});
  if (!yaml_parser_initialize(parser.get()))
    return Error{-ENOMEM, file_name + ": cannot initialise the YAML parser"};
  yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  yaml_parser_set_encoding(parser.get(), YAML_UTF8_ENCODING);
  TreeBuilder builder(parser.get(), text, file_name);
  return builder.build();
}

Result<std::string> read_text_file(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    int saved = errno;
    return Error{-saved, path + ": cannot read: " + std::strerror(saved)};
  }
  std::string text;
  char buffer[8192];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, got);
  int failed = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (failed) return Error{-failed, path + ": cannot read: " + std::strerror(failed)};
  return text;
}

Result<YamlNode> parse_yaml_file(const std::string& path) {
  STACKIE_TRY_ASSIGN(text, read_text_file(path));
  return parse_yaml(text, path);
}

}  // namespace stackie
