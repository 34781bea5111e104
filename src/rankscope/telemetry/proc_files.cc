#include "rankscope/telemetry/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace rankscope::telemetry {

bool ReadSmallFile(const std::string& path, std::string* buffer) {
  buffer->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char chunk[8192];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    buffer->append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::string text;
  if (!ReadSmallFile(path, &text)) return NotFound("cannot read {}", path);
  return text;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

uint64_t ParseU64(std::string_view text, uint64_t fallback) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
  return ec == std::errc() ? v : fallback;
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = ::opendir(path.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") out.emplace_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

int64_t ClockTicksPerSecond() {
  static const int64_t ticks = [] {
    const long v = ::sysconf(_SC_CLK_TCK);
    return v > 0 ? v : 100;
  }();
  return ticks;
}

int64_t PageSize() {
  static const int64_t size = [] {
    const long v = ::sysconf(_SC_PAGESIZE);
    return v > 0 ? v : 4096;
  }();
  return size;
}

}  // namespace rankscope::telemetry
