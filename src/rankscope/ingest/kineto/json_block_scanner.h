// JSON structure scanning, 64 bytes at a time: where strings are, and where brackets open and
// close outside them. The tokenizer uses it to cut the traceEvents array into chunks at element
// boundaries without trusting the producer's whitespace.
//
// The string/escape logic is simdjson's stage-1 algorithm (odd backslash runs escape the next
// byte; an unescaped quote toggles "in string"; prefix-XOR turns toggles into a mask). This file
// is compiled once per CPU target (see kineto_format.cc); the SIMD width follows the flags.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#ifndef RANKSCOPE_TARGET_NS
#error "json_block_scanner.h is compiled per CPU target: define RANKSCOPE_TARGET_NS"
#endif

// Per-target namespace: the same function compiled for two targets must not share a symbol.
namespace rankscope::kineto::RANKSCOPE_TARGET_NS {

// Carried from one 64-byte block to the next.
struct ScanCarry {
  uint64_t prev_escaped = 0;    // 1 when the previous block ended in an odd run of backslashes
  uint64_t prev_in_string = 0;  // all ones when the previous block ended inside a string
};

// Bit i of each mask describes byte i of the block, outside strings only.
struct BlockMasks {
  uint64_t open;   // '{' or '['
  uint64_t close;  // '}' or ']'
  uint64_t comma;  // ','
};

#if defined(__AVX2__)
inline uint64_t MatchMask(const uint8_t* p, uint8_t c) {
  const __m256i needle = _mm256_set1_epi8(static_cast<char>(c));
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  const uint32_t a = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, needle)));
  const uint32_t b = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, needle)));
  return uint64_t{a} | (uint64_t{b} << 32);
}
// Bytes equal to c after OR-ing 0x20 in: '{' and '[' (0x7B, 0x5B) both become 0x7B.
inline uint64_t MatchMaskFolded(const uint8_t* p, uint8_t c) {
  const __m256i fold = _mm256_set1_epi8(0x20);
  const __m256i needle = _mm256_set1_epi8(static_cast<char>(c));
  const __m256i lo = _mm256_or_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), fold);
  const __m256i hi = _mm256_or_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), fold);
  const uint32_t a = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, needle)));
  const uint32_t b = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, needle)));
  return uint64_t{a} | (uint64_t{b} << 32);
}
#elif defined(__SSE2__)
inline uint64_t MatchMask16x4(const uint8_t* p, __m128i needle, __m128i fold) {
  uint64_t m = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), fold);
    m |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)))} << (16 * i);
  }
  return m;
}
inline uint64_t MatchMask(const uint8_t* p, uint8_t c) {
  return MatchMask16x4(p, _mm_set1_epi8(static_cast<char>(c)), _mm_setzero_si128());
}
inline uint64_t MatchMaskFolded(const uint8_t* p, uint8_t c) {
  return MatchMask16x4(p, _mm_set1_epi8(static_cast<char>(c)), _mm_set1_epi8(0x20));
}
#else
inline uint64_t MatchMask(const uint8_t* p, uint8_t c) {
  uint64_t m = 0;
  for (int i = 0; i < 64; ++i) m |= uint64_t{p[i] == c} << i;
  return m;
}
inline uint64_t MatchMaskFolded(const uint8_t* p, uint8_t c) {
  uint64_t m = 0;
  for (int i = 0; i < 64; ++i) m |= uint64_t{static_cast<uint8_t>(p[i] | 0x20) == c} << i;
  return m;
}
#endif

inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// Bytes escaped by a backslash (simdjson's find_escaped).
inline uint64_t FindEscaped(uint64_t backslash, uint64_t& prev_escaped) {
  if (backslash == 0) {
    const uint64_t escaped = prev_escaped;
    prev_escaped = 0;
    return escaped;
  }
  backslash &= ~prev_escaped;
  const uint64_t follows_escape = backslash << 1 | prev_escaped;
  constexpr uint64_t kEvenBits = 0x5555555555555555ULL;
  const uint64_t odd_sequence_starts = backslash & ~kEvenBits & ~follows_escape;
  uint64_t sequences_starting_on_even_bits;
  prev_escaped = __builtin_add_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits);
  const uint64_t invert_mask = sequences_starting_on_even_bits << 1;
  return (kEvenBits ^ invert_mask) & follows_escape;
}

// Classifies one full 64-byte block and advances the carry.
inline BlockMasks ScanBlock(const uint8_t* p, ScanCarry& carry) {
  const uint64_t escaped = FindEscaped(MatchMask(p, '\\'), carry.prev_escaped);
  const uint64_t quote = MatchMask(p, '"') & ~escaped;
  const uint64_t in_string = PrefixXor(quote) ^ carry.prev_in_string;
  carry.prev_in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
  const uint64_t outside = ~in_string;
  return BlockMasks{MatchMaskFolded(p, '{') & outside, MatchMaskFolded(p, '}') & outside,
                    MatchMask(p, ',') & outside};
}

}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS
