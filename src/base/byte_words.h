// Eight bytes at a time (issue 25): the log classifier and the JSON writer cross long runs of
// ordinary bytes a machine word at a time. The tests are the usual exact ones for "some byte is
// zero" and "some byte is below N", true for the word as a whole, never for a byte's neighbour.
#pragma once

#include <cstdint>
#include <cstring>

namespace stackie::byte_words {

inline constexpr uint64_t kOnes = 0x0101010101010101ull;  // 0x01 in every byte
inline constexpr uint64_t kHigh = 0x8080808080808080ull;  // the top bit of every byte

// The eight bytes at `at`, in memory order (no alignment needed).
inline uint64_t load8(const char* at) {
  uint64_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// Some byte of `word` is 0x00.
inline bool has_zero_byte(uint64_t word) {
  return ((word - kOnes) & ~word & kHigh) != 0;
}

// Some byte of `word` is below `n` (n <= 128).
inline bool has_byte_below(uint64_t word, uint8_t n) {
  return ((word - kOnes * n) & ~word & kHigh) != 0;
}

}  // namespace stackie::byte_words
