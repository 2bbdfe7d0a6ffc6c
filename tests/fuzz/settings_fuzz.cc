// libFuzzer target: the settings TOML ($STACKIE_HOME/config.toml) from text.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "stack/settings.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto settings = stackie::parse_settings(text, "/fuzz/config.toml");
  if (settings.ok()) {
    // Accepted settings keep their documented invariants.
    if (settings->log_max_files < 0) std::abort();
    if (!settings->storage_root.empty() && settings->storage_root[0] != '/') std::abort();
  } else if (settings.error().message.empty()) {
    std::abort();
  }
  return 0;
}
