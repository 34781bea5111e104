#include "rankscope/cluster/significance.h"

#include <algorithm>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

StepSignificance TestStepExcess(const std::vector<std::vector<double>>& values, const std::vector<bool>& group) {
  StepSignificance out;
  if (values.empty() || std::count(group.begin(), group.end(), false) == 0) return out;
  const size_t steps = values.front().size();
  std::vector<double> excess;
  for (size_t s = 0; s < steps; ++s) {
    const std::vector<double> column = StepColumn(values, s);
    const PeerBand peers = PeersOf(column, group);
    double smallest = -1;
    for (size_t r = 0; r < column.size(); ++r) {
      if (group[r] && (smallest < 0 || column[r] < smallest)) smallest = column[r];
    }
    if (smallest < 0) return out;
    excess.push_back(smallest - peers.median);
    if (smallest - peers.median > peers.iqr) ++out.exceeding;
  }
  out.steps = steps;
  out.median_excess_ns = ComputeRobustStats(excess).median;
  out.significant = steps > 0 && static_cast<double>(out.exceeding) > kSignificantStepShare * static_cast<double>(steps);
  return out;
}

std::vector<std::vector<double>> PhaseTable(const StepSeries& series, StepPhase phase, bool gpu) {
  const auto& source = gpu ? series.gpu_phase_ns : series.cpu_phase_ns;
  std::vector<std::vector<double>> out(source.size());
  for (size_t r = 0; r < source.size(); ++r) {
    for (const PhaseValues& v : source[r]) out[r].push_back(v[static_cast<int>(phase)]);
  }
  return out;
}

void ApplyStepSignificance(const StepSeries& series, const std::vector<RankHost>& hosts, SlowRankAnalysis* slow,
                           std::vector<PhaseOutlier>* phases) {
  if (series.steps() == 0) return;
  const size_t n = series.ranks();
  auto alone = [n](uint32_t r) {
    std::vector<bool> g(n, false);
    g[r] = true;
    return g;
  };
  bool changed = false;
  for (uint32_t r = 0; r < n && r < slow->slow.size(); ++r) {
    if (slow->slow[r] && !TestStepExcess(series.local_ns, alone(r)).significant) {
      slow->slow[r] = false;
      changed = true;
    }
  }
  if (changed) slow->groups = GroupSlowRanks(*slow, hosts);
  std::erase_if(*phases, [&](const PhaseOutlier& p) {
    return !TestStepExcess(PhaseTable(series, p.phase, p.gpu), alone(p.rank)).significant;
  });
}

}  // namespace rankscope
