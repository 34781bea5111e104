// Findings of a comparison (the shared Finding type): one per difference beyond noise, keyed by
// cause and subject across the compared ranks, so that a change every rank shows is one finding
// naming all of them. Cost: the difference per step on the rank where it is largest (method
// kDelta): for a regression, what reverting it is worth.
#pragma once

#include <vector>

#include "rankscope/compare/compare_result.h"
#include "rankscope/findings/finding.h"

namespace rankscope::compare {

std::vector<Finding> CompareFindings(const std::vector<RankComparison>& ranks, size_t per_rank = 10);

}  // namespace rankscope::compare
