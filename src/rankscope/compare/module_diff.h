// Module comparison: the aligned nn.Module trees (op_alignment.h) as rows, each with its
// forward time (host and GPU, total and self), its backward operators' time, the wall time its
// operators cost (attribution cells), the source line of its forward(), and the operators under
// it that changed most.
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/op_alignment.h"

namespace rankscope::compare {

std::vector<ModuleRow> BuildModuleRows(const CompareSummary& base, const CompareSummary& neu,
                                       const TreeAlignment& modules, const TreeAlignment& ops);

}  // namespace rankscope::compare
