#include "rankscope/report/text_format.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace rankscope {

std::string FormatNs(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string FormatShare(double share) { return fmt::format("{:.1f}%", share * 100.0); }

std::string FormatByteCount(int64_t b) {
  if (b < 0) return "-";
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / double(int64_t{1} << 30));
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / double(int64_t{1} << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

std::string FormatUtcTime(int64_t ns) {
  const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:06d} UTC", buf, (ns % 1'000'000'000) / 1000);
}

std::string CellName(std::string_view name, size_t width) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  // Drop the argument list: the '(' that opens the final balanced "(...)".
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        if (i > 0) name = name.substr(0, i);
        break;
      }
    }
  }
  if (name.size() <= width) return std::string(name);
  return std::string(name.substr(0, width > 3 ? width - 3 : 0)) + "...";
}

std::string CellPath(std::string_view path, size_t width) {
  if (path.size() <= width) return std::string(path);
  std::string_view tail = path.substr(path.size() - (width > 3 ? width - 3 : 0));
  return "..." + std::string(tail);
}

std::string WrapLines(std::string_view text, const std::string& first_indent, const std::string& indent,
                      size_t total_width) {
  const size_t width = total_width > indent.size() + 1 ? total_width - indent.size() : 1;
  std::string out, line;
  bool first = true;
  auto flush = [&] {
    out += (first ? first_indent : indent) + line + "\n";
    first = false;
    line.clear();
  };
  while (!text.empty()) {
    const size_t space = text.find(' ');
    std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    while (word.size() > width) {  // a kernel name longer than a line is cut across lines
      if (!line.empty()) flush();
      line = std::string(word.substr(0, width));
      flush();
      word.remove_prefix(width);
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) flush();
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty()) flush();
  return out;
}

std::string WrapText(std::string_view text, size_t width, const std::string& indent) {
  std::string out = WrapLines(text, indent, indent, width + indent.size());
  if (!out.empty()) out.pop_back();  // no newline after the last line
  return out;
}

std::string Style::Wrap(std::string_view code, std::string_view s) const {
  if (!color_) return std::string(s);
  return fmt::format("\x1b[{}m{}\x1b[0m", code, s);
}

}  // namespace rankscope
