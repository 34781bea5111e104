#include "rankscope/base/utf8.h"

#include <cstdint>

namespace rankscope {

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) {
      n = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      n = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      n = 4, cp = c & 0x07, min = 0x10000;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

std::string PrintableUtf8(std::string_view s) {
  const std::string valid = ValidUtf8(s);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    const bool c1 = c == 0xc2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) < 0xa0;  // U+0080..U+009F
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || c1) {
      out += "\xef\xbf\xbd";
      i += c1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string ClipUtf8(std::string_view s, size_t max_bytes) {
  std::string out = ValidUtf8(s);
  if (out.size() <= max_bytes) return out;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xc0) == 0x80) --end;  // back to a character's start
  out.resize(end);
  return out;
}

}  // namespace rankscope
