#include "rankscope/cluster/phase_outliers.h"

#include <algorithm>

namespace rankscope {

std::vector<PhaseOutlier> FindPhaseOutliers(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics,
                                            const OutlierRule& rule, double min_excess_ns) {
  std::vector<PhaseOutlier> out;
  if (metrics.empty() || metrics.front().steps == 0) return out;
  const bool gpu = std::all_of(ranks.begin(), ranks.end(), [](const RankSummary& r) { return r.has_gpu; });
  for (int side = 0; side < (gpu ? 2 : 1); ++side) {
    for (int p = 0; p < kNumStepPhases; ++p) {
      std::vector<double> values;
      for (const RankMetrics& m : metrics) values.push_back(side ? m.gpu_phase_ns[p] : m.cpu_phase_ns[p]);
      const RobustStats stats = ComputeRobustStats(values);
      for (uint32_t r = 0; r < values.size(); ++r) {
        const RobustStats against = ComparedWith(values, r, stats);
        const double excess = values[r] - against.median;
        if (!rule.IsHigh(values[r], against) || excess < min_excess_ns) continue;
        out.push_back({static_cast<StepPhase>(p), side == 1, r, values[r], against.median, rule.Threshold(against),
                       excess});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const PhaseOutlier& a, const PhaseOutlier& b) { return a.excess_ns > b.excess_ns; });
  return out;
}

}  // namespace rankscope
