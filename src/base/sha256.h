// SHA-256 of a byte string (FIPS 180-4), for names derived from a sandbox's id that another
// block must not be able to choose its way into (base/fnv1a.h is for names where a collision
// costs nothing but a clearer message).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace stackie {

std::array<uint8_t, 32> sha256(std::string_view data);

}  // namespace stackie
