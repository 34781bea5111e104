// Memory comparison, when both runs recorded memory events (profile_memory=True): per operator
// name, allocations and bytes allocated per step and the peak "Total Allocated" seen inside it;
// per device, the peak allocated and reserved over the window.
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

std::vector<MemoryRow> BuildMemoryRows(const CompareSummary& base, const CompareSummary& neu, size_t max_rows = 500);
std::vector<MemoryPeakRow> BuildMemoryPeaks(const CompareSummary& base, const CompareSummary& neu);

}  // namespace rankscope::compare
