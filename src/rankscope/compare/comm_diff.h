// Communication comparison per collective op, dtype and message-size bucket: instances, time,
// exposed time (the attribution cells of communication), bytes, algorithm / bus bandwidth, and
// the algorithm / protocol the kernels name, for both runs per step.
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

std::vector<CommDiffRow> BuildCommRows(const CompareSummary& base, const CompareSummary& neu);

}  // namespace rankscope::compare
