#include "rankscope/cluster/what_if.h"

#include <algorithm>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

WhatIf Compare(const std::vector<RankMetrics>& metrics, const std::vector<double>& new_local) {
  WhatIf w;
  w.step_ns = JobStepNs(metrics);
  double before = 0, after = 0;
  for (size_t r = 0; r < metrics.size(); ++r) {
    before = std::max(before, metrics[r].local_ns);
    after = std::max(after, new_local[r]);
  }
  w.saving_ns = std::max(0.0, before - after);
  w.estimated_step_ns = w.step_ns - w.saving_ns;
  return w;
}

std::vector<double> Locals(const std::vector<RankMetrics>& metrics) {
  std::vector<double> v;
  for (const RankMetrics& m : metrics) v.push_back(m.local_ns);
  return v;
}

}  // namespace

double JobStepNs(const std::vector<RankMetrics>& metrics) {
  std::vector<double> v;
  for (const RankMetrics& m : metrics) v.push_back(m.step_ns);
  return ComputeRobustStats(v).median;
}

double MedianLocalNs(const std::vector<RankMetrics>& metrics) { return ComputeRobustStats(Locals(metrics)).median; }

WhatIf WhatIfLikeMedian(const std::vector<RankMetrics>& metrics, const std::vector<uint32_t>& fixed) {
  std::vector<double> local = Locals(metrics);
  const double median = MedianLocalNs(metrics);
  for (uint32_t r : fixed) local[r] = std::min(local[r], median);
  return Compare(metrics, local);
}

WhatIf WhatIfFaster(const std::vector<RankMetrics>& metrics, const std::vector<RankSaving>& savings) {
  std::vector<double> local = Locals(metrics);
  const double median = MedianLocalNs(metrics);
  for (const RankSaving& s : savings) local[s.rank] = std::max(std::min(local[s.rank], median), local[s.rank] - s.saving_ns);
  return Compare(metrics, local);
}

}  // namespace rankscope
