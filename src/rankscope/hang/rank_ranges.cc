#include "rankscope/hang/rank_ranges.h"

#include <algorithm>

#include "rankscope/base/parse_int.h"

namespace rankscope::hang {
namespace {

void AppendRun(int64_t first, int64_t last, std::string* out) {
  if (!out->empty()) out->push_back(',');
  if (first == last) {
    *out += std::to_string(first);
  } else if (last == first + 1) {
    *out += fmt::format("{},{}", first, last);
  } else {
    *out += fmt::format("{}-{}", first, last);
  }
}

StatusOr<int64_t> ParseRank(std::string_view text, std::string_view whole) {
  const std::optional<int64_t> v = ParseInt(text);
  if (!v || *v < 0) return InvalidArgument("'{}' in the rank list '{}' is not a rank (a number >= 0)", text, whole);
  return *v;
}

}  // namespace

std::string FormatRankRanges(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  size_t i = 0;
  while (i < ranks.size()) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    AppendRun(ranks[i], ranks[j], &out);
    i = j + 1;
  }
  return out;
}

StatusOr<std::vector<int64_t>> ParseRankRanges(std::string_view text, size_t max_ranks) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      RANKSCOPE_ASSIGN_OR_RETURN(int64_t r, ParseRank(item, text));
      out.push_back(r);
    } else {
      RANKSCOPE_ASSIGN_OR_RETURN(int64_t first, ParseRank(item.substr(0, dash), text));
      RANKSCOPE_ASSIGN_OR_RETURN(int64_t last, ParseRank(item.substr(dash + 1), text));
      if (last < first) return InvalidArgument("'{}' in the rank list '{}' is a reversed range", item, text);
      if (static_cast<uint64_t>(last - first) >= max_ranks) {
        return InvalidArgument("the rank list '{}' names more than {} ranks", text, max_ranks);
      }
      for (int64_t r = first; r <= last; ++r) out.push_back(r);
    }
    if (out.size() > max_ranks) return InvalidArgument("the rank list '{}' names more than {} ranks", text, max_ranks);
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace rankscope::hang
