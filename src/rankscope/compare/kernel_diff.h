// Kernel comparison: by name (both runs per step; a kernel only in one run is added / removed),
// and by class (GEMM, convolution, attention, ... kernel_class.h) with the heaviest kernel names
// of each run side by side, which is how runs on different hardware compare.
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"

namespace rankscope::compare {

std::vector<KernelDiffRow> BuildKernelRows(const CompareSummary& base, const CompareSummary& neu);
std::vector<KernelClassRow> BuildKernelClassRows(const CompareSummary& base, const CompareSummary& neu);

}  // namespace rankscope::compare
