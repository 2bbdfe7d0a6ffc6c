// The per-block SID, derived from SHA-256 (base/sha256.h) in pure code so that the derivation is
// identical on every OS and testable on Linux.
#include "base/sha256.h"
#include "sandbox/restricted_token_plan.h"

namespace stackie {

std::string block_sid_for(std::string_view block_name) {
  std::array<uint8_t, 32> digest = sha256("stackie:" + std::string(block_name));
  std::string sid = "S-1-9";
  for (int word = 0; word < 8; ++word) {
    uint32_t value = 0;
    for (int j = 3; j >= 0; --j) value = (value << 8) | digest[4 * word + j];
    sid += '-' + std::to_string(value);
  }
  return sid;
}

}  // namespace stackie
