// A small, fast, non-cryptographic 64-bit hash for interning short strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace rankscope {

// Two independent multiply lanes over 16 bytes per step: names are long (C++ kernel names run
// to hundreds of bytes) and one serial multiply chain was the cost of interning them.
inline uint64_t HashBytes(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t a = 0x9E3779B97F4A7C15ull ^ n;
  uint64_t b = 0xC2B2AE3D27D4EB4Full;
  while (n >= 16) {
    uint64_t v0, v1;
    std::memcpy(&v0, p, 8);
    std::memcpy(&v1, p + 8, 8);
    a = (a ^ v0) * 0xBF58476D1CE4E5B9ull;
    b = (b ^ v1) * 0x94D049BB133111EBull;
    a = (a << 31) | (a >> 33);
    b = (b << 29) | (b >> 35);
    p += 16;
    n -= 16;
  }
  if (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    a = (a ^ v) * 0xBF58476D1CE4E5B9ull;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t v = 0;
    std::memcpy(&v, p, n);
    b = (b ^ v) * 0x94D049BB133111EBull;
  }
  uint64_t h = a ^ (b * 0xFF51AFD7ED558CCDull);
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  return h;
}

}  // namespace rankscope
