#include "rankscope/cluster/gpu_utilization.h"

#include <algorithm>

namespace rankscope {

UtilizationSummary SummarizeUtilization(const std::vector<RankMetrics>& metrics, const OutlierRule& rule) {
  UtilizationSummary u;
  std::vector<double> values;
  std::vector<uint32_t> ranks;
  for (uint32_t r = 0; r < metrics.size(); ++r) {
    if (!metrics[r].gpu_utilization) continue;
    values.push_back(*metrics[r].gpu_utilization);
    ranks.push_back(r);
  }
  u.ranks = values.size();
  if (values.empty()) return u;
  u.min = *std::min_element(values.begin(), values.end());
  u.max = *std::max_element(values.begin(), values.end());
  const RobustStats stats = ComputeRobustStats(values);
  u.median = stats.median;
  u.threshold = rule.Threshold(stats);
  for (size_t i = 0; i < values.size(); ++i) {
    const bool low = rule.IsLow(values[i], stats);
    if (low || rule.IsHigh(values[i], stats)) u.outliers.push_back({ranks[i], values[i], low});
  }
  return u;
}

}  // namespace rankscope
