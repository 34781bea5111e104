// Rank sets written the way people read them: "0-5,7" for {0,1,2,3,4,5,7}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rankscope/base/status.h"

namespace rankscope::hang {

// Sorts and deduplicates, then joins runs of consecutive ranks: {7,0,1,2} -> "0-2,7".
// Runs of two are written out ("3,4"), longer runs as ranges. Empty -> "".
std::string FormatRankRanges(std::vector<int64_t> ranks);

// The inverse: "0-2,7" -> {0,1,2,7}. Rejects negative ranks, reversed ranges and sets of more
// than `max_ranks` ranks (a typo such as "0-99999999" must not allocate gigabytes).
StatusOr<std::vector<int64_t>> ParseRankRanges(std::string_view text, size_t max_ranks = 1 << 20);

}  // namespace rankscope::hang
