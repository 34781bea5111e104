// Terminal rendering of `rankscope compare`: the step-time delta and the ranked differences that
// add up to it first, then the job's ranks, the overall breakdown and the comparison tables of
// the focus ranks, at most 100 columns wide.
#pragma once

#include <string>

#include "rankscope/compare/compare_result.h"

namespace rankscope {

struct CompareTextOptions {
  size_t top = 10;     // rows per table
  bool color = false;
};

std::string RenderCompareReport(const compare::JobComparison& job, const CompareTextOptions& options);

// The sentence for one difference ("input shapes changed: aten::linear [[64,512]...] -> ...").
std::string DescribeDifference(const compare::Difference& d);
// The sentence for an observation.
std::string DescribeObservation(const compare::Observation& o);

}  // namespace rankscope
