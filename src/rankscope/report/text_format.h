// Small helpers for terminal output: durations, shares, bytes, names cut to a width, and ANSI
// colour that is switched on only when writing to a terminal. Every report formats durations
// with FormatNs and byte counts with FormatByteCount, so that one number reads the same
// everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rankscope {

std::string FormatNs(double ns);           // "812 ns", "45.2 us", "12.34 ms", "1.234 s"
std::string FormatShare(double share);     // 0.1234 -> "12.3%"
std::string FormatByteCount(int64_t bytes);  // "512 B", "1.5 KiB", "12.3 MiB", "1.25 GiB"; "-" if < 0
std::string FormatUtcTime(int64_t abs_ns);   // "2026-11-21 17:35:55.123456 UTC"

// A kernel or op name for a table cell: drops a leading "void " and a trailing argument list,
// then keeps the first `width` characters (ending in "..." when cut).
std::string CellName(std::string_view name, size_t width);
// A "a|b|c" call path for a cell: keeps the innermost frames ("...|b|c").
std::string CellPath(std::string_view path, size_t width);

// Word-wraps `text` into lines of at most `total_width` columns, the first starting with
// `first_indent` and the others with `indent`; every line ends in a newline. Words longer than a
// line (kernel names) are cut across lines.
std::string WrapLines(std::string_view text, const std::string& first_indent, const std::string& indent,
                      size_t total_width = 100);
// Word-wraps `text` into lines of at most `width` characters after `indent`, each starting with
// `indent`, without a newline after the last.
std::string WrapText(std::string_view text, size_t width, const std::string& indent);

class Style {
 public:
  explicit Style(bool color) : color_(color) {}
  std::string Bold(std::string_view s) const { return Wrap("1", s); }
  std::string Red(std::string_view s) const { return Wrap("31", s); }
  std::string Yellow(std::string_view s) const { return Wrap("33", s); }
  std::string Dim(std::string_view s) const { return Wrap("2", s); }
  bool color() const { return color_; }

 private:
  std::string Wrap(std::string_view code, std::string_view s) const;
  bool color_;
};

}  // namespace rankscope
