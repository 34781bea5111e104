#include "rankscope/base/decimal.h"

#include <cstddef>
#include <cstring>
#include <limits>

namespace rankscope {
namespace {

__extension__ using Uint128 = unsigned __int128;
__extension__ using Int128 = __int128;

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Eight ASCII digits at p, or false. SWAR: one 64-bit load instead of eight byte steps, then
// the digits are combined pairwise (10a+b, 100a+b, 10000a+b) in three multiplies.
inline bool EightDigits(const char* p, uint64_t* value) {
  uint64_t chunk;
  std::memcpy(&chunk, p, 8);
  const uint64_t all_digits = (chunk & 0xF0F0F0F0F0F0F0F0ull) |
                              (((chunk + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4);
  if (all_digits != 0x3333333333333333ull) return false;
  chunk = ((chunk & 0x0F0F0F0F0F0F0F0Full) * 2561) >> 8;
  chunk = ((chunk & 0x00FF00FF00FF00FFull) * 6553601) >> 16;
  *value = ((chunk & 0x0000FFFF0000FFFFull) * 42949672960001ull) >> 32;
  return true;
}

// value = digits × 10^exp10, rounded half away from zero to an integer; false on overflow.
// `digits` holds only '0'..'9' with leading zeros already removed.
bool ScaleDigits(std::string_view digits, int64_t exp10, bool negative, int64_t* out) {
  if (digits.empty()) {
    *out = 0;
    return true;
  }
  // Number of digits that land left of the decimal point after scaling.
  const int64_t int_len = static_cast<int64_t>(digits.size()) + exp10;
  if (int_len > 19) return false;  // >= 10^19 > INT64_MAX (first digit is non-zero)
  Uint128 acc = 0;
  for (int64_t i = 0; i < int_len; ++i) {
    const int d = i < static_cast<int64_t>(digits.size()) ? digits[i] - '0' : 0;
    acc = acc * 10 + static_cast<unsigned>(d);
  }
  // Round half away from zero on the first dropped digit.
  if (int_len >= 0 && int_len < static_cast<int64_t>(digits.size())) {
    if (digits[int_len] >= '5') acc += 1;
  } else if (int_len < 0) {
    acc = 0;  // |value| < 0.1, rounds to 0
  }
  const Uint128 limit =
      negative ? static_cast<Uint128>(std::numeric_limits<int64_t>::max()) + 1
               : static_cast<Uint128>(std::numeric_limits<int64_t>::max());
  if (acc > limit) return false;
  *out = negative ? static_cast<int64_t>(-static_cast<Int128>(acc)) : static_cast<int64_t>(acc);
  return true;
}


// One pass over the common shapes ("1707417525512145", "4424458002433.952"): at most 19 digits
// in all after scaling (so they fit in uint64), at most `scale_digits` fraction digits, no
// exponent. Returns false for anything else
// (which ParseGeneral then handles, or rejects).
inline bool ParseFast(std::string_view text, int scale_digits, int64_t* out) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p != end && *p == '-';
  p += negative;
  const char* const int_begin = p;
  uint64_t v = 0, eight = 0;
  while (end - p >= 8 && EightDigits(p, &eight)) {
    if (p - int_begin >= 16) return false;  // 24+ digits: leave it to the general path
    v = v * 100000000 + eight;
    p += 8;
  }
  while (p != end && IsDigit(*p)) v = v * 10 + static_cast<unsigned>(*p++ - '0');
  const std::ptrdiff_t int_digits = p - int_begin;
  if (int_digits == 0 || int_digits + scale_digits > 19) return false;
  int frac_digits = 0;
  if (p != end && *p == '.') {
    ++p;
    while (p != end && IsDigit(*p) && frac_digits < scale_digits) {
      v = v * 10 + static_cast<unsigned>(*p++ - '0');
      ++frac_digits;
    }
    if (frac_digits == 0) return false;
  }
  if (p != end) return false;  // more fraction digits, an exponent, or junk
  for (int k = frac_digits; k < scale_digits; ++k) v *= 10;
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;  // let the general path decide
  *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace

NumberError ParseScaledDecimal(std::string_view text, int scale_digits, int64_t* out) {
  if (ParseFast(text, scale_digits, out)) return NumberError::kOk;
  size_t i = 0;
  const size_t n = text.size();
  bool negative = false;
  if (i < n && text[i] == '-') {
    negative = true;
    ++i;
  }
  const size_t int_begin = i;
  while (i < n && IsDigit(text[i])) ++i;
  const size_t int_end = i;
  if (int_end == int_begin) return NumberError::kNotANumber;
  size_t frac_begin = i, frac_end = i;
  if (i < n && text[i] == '.') {
    frac_begin = ++i;
    while (i < n && IsDigit(text[i])) ++i;
    frac_end = i;
    if (frac_end == frac_begin) return NumberError::kNotANumber;
  }
  int64_t exp10 = 0;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    if (i == n || !IsDigit(text[i])) return NumberError::kNotANumber;
    for (; i < n && IsDigit(text[i]); ++i) {
      if (exp10 < 100000) exp10 = exp10 * 10 + (text[i] - '0');  // saturate: beyond any range
    }
    if (exp_negative) exp10 = -exp10;
  }
  if (i != n) return NumberError::kNotANumber;

  // General path: concatenate significant digits and track the decimal exponent.
  char buf[64];
  size_t len = 0;
  int64_t dropped_int_digits = 0;  // integer digits beyond buf (the value is then huge)
  auto push = [&](char c) {
    if (len == 0 && c == '0') return false;  // leading zero
    if (len < sizeof(buf)) {
      buf[len++] = c;
      return true;
    }
    return false;
  };
  for (size_t k = int_begin; k < int_end; ++k) {
    if (!push(text[k]) && len == sizeof(buf)) ++dropped_int_digits;
  }
  int64_t frac_used = 0;
  for (size_t k = frac_begin; k < frac_end; ++k) {
    if (len == 0 && text[k] == '0') {  // leading zeros of a value < 1 shift the exponent
      ++frac_used;
      continue;
    }
    if (len < sizeof(buf)) {
      buf[len++] = text[k];
      ++frac_used;
    }
    // Digits beyond 64 significant ones cannot change the rounded ns value.
  }
  const int64_t total_exp = exp10 + scale_digits - frac_used + dropped_int_digits;
  if (!ScaleDigits(std::string_view(buf, len), total_exp, negative, out)) {
    return NumberError::kOutOfRange;
  }
  return NumberError::kOk;
}

std::string_view NumberErrorName(NumberError e) {
  switch (e) {
    case NumberError::kOk: return "ok";
    case NumberError::kNotANumber: return "not a number";
    case NumberError::kOutOfRange: return "number out of range";
  }
  return "?";
}

}  // namespace rankscope
