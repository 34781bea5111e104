// UTF-8 for text that comes from outside (a collector's message, a process's command line, a
// pickled dump): JSON can only carry valid UTF-8, and nlohmann::json throws when asked to write
// anything else, so such text is made valid before it is kept, and clipped only between
// characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rankscope {

// `s` with every invalid sequence (a stray byte, an overlong form, a surrogate, a code point
// beyond U+10FFFF, a cut-off character) replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

// ValidUtf8(s) without control characters (C0 but tab and newline, DEL, C1), each replaced by
// U+FFFD: text from a file someone else wrote that is printed to a terminal, where an ESC could
// rewrite what the reader sees.
std::string PrintableUtf8(std::string_view s);

// ValidUtf8(s), then at most `max_bytes` bytes of it, cut before a character, never inside one.
std::string ClipUtf8(std::string_view s, size_t max_bytes);

}  // namespace rankscope
