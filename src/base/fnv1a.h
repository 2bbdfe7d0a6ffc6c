// FNV-1a, 64 bits: a stable, short name for a string (a pipe name, a hostname's tail), the same
// on every build and platform. Not a defence against chosen inputs: use it to tell names apart,
// never to keep a secret or stand for a sandbox's identity against its author.
#pragma once

#include <cstdint>
#include <string_view>

namespace stackie {

inline uint64_t fnv1a_64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

}  // namespace stackie
