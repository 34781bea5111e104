#include "rankscope/cluster/path_key.h"

#include <algorithm>
#include <cctype>

namespace rankscope {
namespace {

constexpr std::string_view kGenerated = "<generated code>";
constexpr size_t kMinHashChars = 32;

bool IsAddressAt(std::string_view s, size_t i) {
  return s.substr(i, 2) == "0x" && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 2]));
}

bool HasAddress(std::string_view path) {
  for (size_t i = path.find("0x"); i != std::string_view::npos; i = path.find("0x", i + 1)) {
    if (IsAddressAt(path, i)) return true;
  }
  return false;
}

// Where a frame "FILE(LINE): FUNCTION" of generated code ends its "FILE(LINE)" part, or 0 when the
// frame is not generated code.
size_t GeneratedFileEnd(std::string_view frame) {
  const size_t colon = frame.find("): ");
  if (colon == std::string_view::npos) return 0;
  const size_t paren = frame.rfind('(', colon);
  if (paren == std::string_view::npos) return 0;
  std::string_view file = frame.substr(0, paren);
  if (!file.ends_with(".py")) return 0;
  file.remove_suffix(3);
  const size_t slash = file.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? file : file.substr(slash + 1);
  const bool hash = base.size() >= kMinHashChars && std::all_of(base.begin(), base.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
  });
  return hash ? colon + 1 : 0;
}

void AppendWithoutAddresses(std::string_view s, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    if (IsAddressAt(s, i)) {
      *out += "0x?";
      for (i += 2; i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])); ++i) {
      }
      continue;
    }
    *out += s[i++];
  }
}

}  // namespace

bool NeedsPathKey(std::string_view path) {
  if (HasAddress(path)) return true;
  if (path.find(".py(") == std::string_view::npos) return false;
  bool generated = false;
  ForEachFrame(path, [&](std::string_view frame, bool) { generated = generated || GeneratedFileEnd(frame) > 0; });
  return generated;
}

std::string PathKey(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  ForEachFrame(path, [&](std::string_view frame, bool more) {
    if (const size_t end = GeneratedFileEnd(frame); end > 0) {
      out += kGenerated;
      frame.remove_prefix(end);
    }
    AppendWithoutAddresses(frame, &out);
    if (more) out += '|';
  });
  return out;
}

}  // namespace rankscope
