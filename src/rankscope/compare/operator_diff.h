// Operator comparison tables: the aligned operator trees as rows (both runs per step), and the
// operator statistics by name.
//
// Which rows: every thread root and top-level operator; a node's children are shown when it is
// an annotation (forward, DataLoader, Optimizer.step... hide the operators that change), when
// something below it was added, removed or changed shapes (the change must be visible), or, with
// --max-kernels N (msprof-analyze's option), when it launched more than N GPU activities.
#pragma once

#include <optional>
#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/compare/compare_summary.h"
#include "rankscope/compare/op_alignment.h"

namespace rankscope::compare {

std::vector<OperatorRow> BuildOperatorRows(const CompareSummary& base, const CompareSummary& neu,
                                           const TreeAlignment& ops, std::optional<int64_t> max_kernels,
                                           size_t max_rows = 20'000);

std::vector<OperatorStatRow> BuildOperatorStats(const CompareSummary& base, const CompareSummary& neu,
                                                const AlignOptions& options);

}  // namespace rankscope::compare
