#include "stack/compose_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace stackie {

namespace {

bool parse_number(std::string_view text, int* out) {
  if (text.empty()) return false;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  *out = value;
  return true;
}

// "8080" or "8080-8081" -> [first, last]; ports 1-65535 only.
bool parse_range(std::string_view text, int* first, int* last) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    if (!parse_number(text, first)) return false;
    *last = *first;
  } else if (!parse_number(text.substr(0, dash), first) ||
             !parse_number(text.substr(dash + 1), last)) {
    return false;
  }
  return *first >= 1 && *last <= 65535 && *first <= *last;
}

Error bad_port(const YamlNode& node, const std::string& why) {
  return error_at(node.where, "invalid port '" + node.text + "': " + why +
                                  " (expected e.g. 8080, 8080:80, 127.0.0.1:8080:80, "
                                  "9090-9091:8080-8081)");
}

Result<PortSpec> parse_short_port(const YamlNode& node) {
  PortSpec spec;
  std::string text = node.text;
  if (size_t slash = text.find('/'); slash != std::string::npos) {
    spec.protocol = text.substr(slash + 1);
    text.resize(slash);
  }
  std::string host_ip;
  if (!text.empty() && text[0] == '[') {  // "[::1]:6001:6001"
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return bad_port(node, "unclosed '[' of an IPv6 address");
    host_ip = text.substr(1, close - 1);
    text = text.substr(close + 2);
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) return bad_port(node, "too many ':'");
  if (parts.size() == 3) {
    if (!host_ip.empty()) return bad_port(node, "two host addresses");
    host_ip = parts[0];
    parts.erase(parts.begin());
  }
  int container_first = 0, container_last = 0, host_first = 0, host_last = 0;
  if (!parse_range(parts.back(), &container_first, &container_last))
    return bad_port(node, "'" + parts.back() + "' is not a port or a range of ports");
  if (parts.size() == 2 && !parts[0].empty()) {
    if (!parse_range(parts[0], &host_first, &host_last))
      return bad_port(node, "'" + parts[0] + "' is not a port or a range of ports");
    if (host_last - host_first != container_last - container_first)
      return bad_port(node, "the host range and the container range differ in length");
  }
  for (int port = container_first; port <= container_last; ++port) {
    ComposePort out;
    out.container = port;
    out.host = host_first ? host_first + (port - container_first) : 0;
    out.host_ip = host_ip;
    out.where = node.where;
    spec.ports.push_back(out);
  }
  return spec;
}

Result<PortSpec> parse_long_port(const YamlNode& node) {
  PortSpec spec;
  ComposePort port;
  port.where = node.where;
  int host_first = 0, host_last = 0;
  for (const auto& [key, value] : node.entries) {
    if (!value.is_scalar()) return error_at(value.where, "'" + key.text + "' must be a scalar");
    if (key.text == "target") {
      if (!parse_number(value.text, &port.container) || port.container < 1 ||
          port.container > 65535)
        return error_at(value.where, "'target' must be a port, got '" + value.text + "'");
    } else if (key.text == "published") {
      if (!parse_range(value.text, &host_first, &host_last))
        return error_at(value.where,
                        "'published' must be a port or a range, got '" + value.text + "'");
    } else if (key.text == "host_ip") {
      port.host_ip = value.text;
    } else if (key.text == "protocol") {
      spec.protocol = value.text;
    } else if (key.text == "name") {
      port.name = value.text;
    } else if (key.text != "mode" && key.text != "app_protocol") {
      return error_at(key.where, "unknown field '" + key.text +
                                     "' of a port (expected target, published, host_ip, "
                                     "protocol, name, mode, app_protocol)");
    }
  }
  if (port.container == 0) return error_at(node.where, "a port in the long form needs 'target'");
  // A published range for one target: compose takes the first free; Stackie moves a taken
  // host port to the next free one on its own.
  port.host = host_first;
  spec.ports.push_back(port);
  return spec;
}

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string escape_dollars(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

void merge_into(YamlNode& target, const YamlNode& source) {
  if (!source.is_map()) return;
  for (const auto& entry : source.entries) {
    bool present = std::any_of(target.entries.begin(), target.entries.end(),
                               [&](const auto& own) { return own.first.text == entry.first.text; });
    if (!present) target.entries.push_back(entry);
  }
}

}  // namespace

YamlNode make_scalar(const std::string& text, const SourceLocation& where) {
  YamlNode node;
  node.kind = YamlNode::Kind::scalar;
  node.style = YamlNode::Style::quoted;
  node.text = text;
  node.where = where;
  return node;
}

Result<PortSpec> parse_compose_port(const YamlNode& node) {
  if (node.is_map()) return parse_long_port(node);
  if (!node.is_scalar()) return error_at(node.where, "a port must be a string or a map");
  return parse_short_port(node);
}

Result<YamlNode> translate_interpolation(const YamlNode& scalar, const SecretKnown& known) {
  const std::string& text = scalar.text;
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i++];
      continue;
    }
    char next = text[i + 1];
    if (next == '$') {
      out += "$$";
      i += 2;
      continue;
    }
    if (is_name_start(next)) {  // $NAME
      size_t end = i + 1;
      while (end < text.size() && is_name_char(text[end])) ++end;
      out += "${secrets." + text.substr(i + 1, end - i - 1) + "}";
      i = end;
      continue;
    }
    if (next != '{') {
      out += text[i++];
      continue;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string::npos)
      return error_at(scalar.at_offset(i), "unclosed '${' in '" + text + "'");
    std::string body = text.substr(i + 2, close - i - 2);
    size_t name_end = 0;
    while (name_end < body.size() && is_name_char(body[name_end])) ++name_end;
    std::string name = body.substr(0, name_end);
    if (name.empty() || !is_name_start(name[0]))
      return error_at(scalar.at_offset(i), "invalid variable '${" + body + "}'");
    std::string rest = body.substr(name_end);
    std::string secret = "${secrets." + name + "}";
    if (rest.empty() || rest.rfind(":?", 0) == 0 || rest.rfind("?", 0) == 0) {
      out += secret;
    } else if (rest.rfind(":-", 0) == 0 || rest.rfind("-", 0) == 0) {
      std::string fallback = rest.substr(rest[0] == ':' ? 2 : 1);
      out += known(name) ? secret : escape_dollars(fallback);
    } else if (rest.rfind(":+", 0) == 0 || rest.rfind("+", 0) == 0) {
      std::string replacement = rest.substr(rest[0] == ':' ? 2 : 1);
      out += known(name) ? escape_dollars(replacement) : "";
    } else {
      return error_at(scalar.at_offset(i), "unsupported form '${" + body +
                                               "}' (expected ${NAME}, ${NAME:-default}, "
                                               "${NAME-default}, ${NAME:?error}, ${NAME:+alt})");
    }
    i = close + 1;
  }
  YamlNode node = scalar;
  node.text = out;
  return node;
}

ImageRef parse_image(const std::string& image) {
  std::string text = image.substr(0, image.find('@'));
  size_t slash = text.rfind('/');
  std::string last = slash == std::string::npos ? text : text.substr(slash + 1);
  ImageRef ref;
  size_t colon = last.find(':');
  ref.repository = last.substr(0, colon);
  if (colon != std::string::npos) ref.tag = last.substr(colon + 1);
  std::transform(ref.repository.begin(), ref.repository.end(), ref.repository.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ref;
}

void apply_merge_keys(YamlNode& node) {
  for (auto& item : node.items) apply_merge_keys(item);
  if (!node.is_map()) return;
  for (auto& entry : node.entries) apply_merge_keys(entry.second);
  auto merge = std::find_if(node.entries.begin(), node.entries.end(),
                            [](const auto& entry) { return entry.first.text == "<<"; });
  if (merge == node.entries.end()) return;
  YamlNode sources = merge->second;
  node.entries.erase(merge);
  if (sources.is_sequence()) {
    for (const auto& source : sources.items) merge_into(node, source);
  } else {
    merge_into(node, sources);
  }
}

}  // namespace stackie
