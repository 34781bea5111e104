// Exact conversion of JSON number text to integer nanoseconds.
//
// Kineto writes times in microseconds, either as integers ("1623143089861") or with three
// decimals ("4424458002433.952"). Converting through a double puts ~15% of such values 1 ns off,
// so we parse the digits straight into an integer: exact for every value that has at most
// nanosecond precision, and rounded half away from zero below that.
#pragma once

#include <cstdint>
#include <string_view>

namespace rankscope {

enum class NumberError : uint8_t {
  kOk = 0,
  kNotANumber,  // not JSON number syntax
  kOutOfRange,  // does not fit in int64 after scaling
};

// Parses `text` (a JSON number, e.g. "12.5" or "-3e2") as a count of units of 10^-scale_digits
// and returns the value scaled by 10^scale_digits, i.e. MicrosToNanos uses scale_digits = 3.
NumberError ParseScaledDecimal(std::string_view text, int scale_digits, int64_t* out);

inline NumberError ParseMicrosToNanos(std::string_view text, int64_t* out) {
  return ParseScaledDecimal(text, 3, out);
}

std::string_view NumberErrorName(NumberError e);

}  // namespace rankscope
