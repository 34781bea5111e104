// A small, fast, non-cryptographic 64-bit hash for interning short strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace rankscope {

inline uint64_t HashBytes(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t v = 0;
    std::memcpy(&v, p, n);
    h = (h ^ v) * 0x94D049BB133111EBull;
    h ^= h >> 29;
  }
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 32;
  return h;
}

}  // namespace rankscope
