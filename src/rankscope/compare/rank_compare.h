// One rank of BASE against the same rank of NEW: step statistics and the noise band, the
// overall breakdown and what it says, the operator and module alignment, the ranked differences
// that add up to the step delta, and (when `detailed`) every comparison table.
#pragma once

#include <optional>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/op_alignment.h"

namespace rankscope::compare {

struct RankCompareOptions {
  AlignOptions align;
  std::optional<int64_t> max_kernels;
  size_t max_differences = 100;
};

RankComparison CompareRanks(const CompareSummary& base, const CompareSummary& neu, const RankCompareOptions& options,
                            bool detailed);

}  // namespace rankscope::compare
