// libFuzzer target: `${kind.name}` expansion of one scalar. References to vars/secrets resolve
// (the latter marks the result secret), anything else is an error, as in the loader.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "stack/interpolate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  stackie::YamlNode scalar;
  scalar.kind = stackie::YamlNode::Kind::scalar;
  scalar.text.assign(reinterpret_cast<const char*>(data), size);
  scalar.where = {"/fuzz/stackie-stack.yml", 3, 7};
  auto resolve = [](const stackie::Reference& ref) -> stackie::Result<stackie::Expanded> {
    if (ref.parts.empty() || ref.text.empty() || ref.where.line < 1) std::abort();
    if (ref.kind == "vars") return stackie::Expanded{"<" + ref.parts[0] + ">", false};
    if (ref.kind == "secrets") return stackie::Expanded{"hidden", true};
    return stackie::error_at(ref.where, "unknown reference " + ref.text);
  };
  auto expanded = stackie::interpolate(scalar, resolve);
  const bool has_dollar = scalar.text.find('$') != std::string::npos;
  if (expanded.ok()) {
    // Text without a '$' comes out unchanged; an accepted string has no reference left to find.
    if (!has_dollar && expanded->text != scalar.text) std::abort();
    if (!has_dollar && expanded->secret) std::abort();
  } else if (expanded.error().message.empty()) {
    std::abort();
  }
  if (!has_dollar && stackie::has_reference(scalar.text)) std::abort();
  (void)scalar.at_offset(size / 2);
  return 0;
}
