// GPU utilization across ranks: min, median, max, and the ranks whose utilization stands out
// (two-sided robust rule: an idle GPU among busy ones, or the reverse).
#pragma once

#include <vector>

#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

struct UtilizationOutlier {
  uint32_t rank = 0;  // summary index
  double value = 0;
  bool low = true;    // below the peers (else above)
};

struct UtilizationSummary {
  size_t ranks = 0;  // ranks with GPU activity; 0: nothing below is meaningful
  double min = 0, median = 0, max = 0;
  double threshold = 0;  // deviation from the median that is abnormal
  std::vector<UtilizationOutlier> outliers;
};

UtilizationSummary SummarizeUtilization(const std::vector<RankMetrics>& metrics, const OutlierRule& rule);

}  // namespace rankscope
