// ParseInt: the whole of a piece of text as an integer, or nothing.
//
// The one integer parser of the code base (times in a trace are exact decimals: decimal.h).
// Accepts what std::from_chars accepts: digits with an optional '-', no '+', no spaces, no
// base prefix; the value must fit in int64_t.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rankscope {

inline std::optional<int64_t> ParseInt(std::string_view text, int base = 10) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace rankscope
