// The small languages inside Compose values: port specifications, `${VAR:-default}`
// interpolation, image references, YAML merge keys. Pure functions over YamlNodes, so each
// form is unit-tested on its own.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "stack/compose_file.h"
#include "stack/yaml_node.h"

namespace stackie {

// "3000", "8000:8000", "127.0.0.1:8001:8001", "9090-9091:8080-8081", "[::1]:6001:6001",
// "6060:6060/tcp", a bare number, or the long form {target, published, host_ip, protocol, name}.
// A range gives one port per number. UDP is refused by the caller through `protocol`.
struct PortSpec {
  std::vector<ComposePort> ports;
  std::string protocol = "tcp";
};
Result<PortSpec> parse_compose_port(const YamlNode& node);

// Compose interpolation to Stackie's: `${NAME}` and `$NAME` become `${secrets.NAME}` (the
// environment, then .env: compose's own sources); `${NAME:-default}` and `${NAME-default}` are
// `${secrets.NAME}` when NAME is known, else the default; `${NAME:?message}` is the secret
// (a missing one is then the loader's error). `$$` stays a literal `$`.
Result<YamlNode> translate_interpolation(const YamlNode& scalar, const SecretKnown& known);

// "docker.io/library/postgres:16-alpine" -> {"postgres", "16-alpine"}; a digest is dropped.
struct ImageRef {
  std::string repository;  // the last path component, lower case
  std::string tag;         // empty = none (latest)
};
ImageRef parse_image(const std::string& image);

// Applies YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`) in place, recursively: the keys of
// the merged maps that the map does not set itself. Compose files use them for shared settings.
void apply_merge_keys(YamlNode& node);

// A scalar node with `text` at `where` (for nodes the mapping makes).
YamlNode make_scalar(const std::string& text, const SourceLocation& where);

}  // namespace stackie
