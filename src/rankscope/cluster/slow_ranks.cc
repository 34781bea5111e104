#include "rankscope/cluster/slow_ranks.h"

#include <algorithm>
#include <map>

namespace rankscope {
namespace {

bool ArrivesLate(const RankArrival& a, const RankMetrics& m, double excess_ns) {
  if (a.instances == 0) return true;  // nothing to check against
  const double steps = m.steps > 0 ? static_cast<double>(m.steps) : 1.0;
  const bool consistently = 2 * a.late_steps >= a.arrival_steps;
  return consistently && static_cast<double>(a.late_sum_ns) / steps >= kMinLatenessShare * excess_ns;
}

}  // namespace

std::vector<SlowGroup> GroupSlowRanks(const SlowRankAnalysis& s, const std::vector<RankHost>& hosts) {
  std::map<std::string, SlowGroup> by_host;
  for (uint32_t r = 0; r < hosts.size(); ++r) {
    SlowGroup& g = by_host[hosts[r].host];
    g.host = hosts[r].host;
    g.host_ranks.push_back(r);
    if (s.slow[r]) g.ranks.push_back(r);
  }
  std::vector<SlowGroup> out;
  for (auto& [host, g] : by_host) {
    if (g.ranks.empty()) continue;
    if (g.ranks.size() >= 2 && 2 * g.ranks.size() >= g.host_ranks.size()) {
      g.scope = SlowScope::kNode;
      out.push_back(g);
      continue;
    }
    for (uint32_t r : g.ranks) out.push_back({SlowScope::kRank, host, {r}, g.host_ranks});
  }
  auto worst = [&](const SlowGroup& g) {
    double m = 0;
    for (uint32_t r : g.ranks) m = std::max(m, s.excess_ns[r]);
    return m;
  };
  std::stable_sort(out.begin(), out.end(), [&](const SlowGroup& a, const SlowGroup& b) { return worst(a) > worst(b); });
  return out;
}

SlowRankAnalysis LocateSlowRanks(const std::vector<RankMetrics>& metrics, const ArrivalAnalysis& arrival,
                                 const std::vector<RankHost>& hosts, const OutlierRule& rule, double min_excess_ns) {
  SlowRankAnalysis s;
  std::vector<double> local;
  for (const RankMetrics& m : metrics) local.push_back(m.local_ns);
  s.local = ComputeRobustStats(local);
  s.threshold_ns = rule.Threshold(s.local);
  LeaveOneOutStats peers(local);
  // Two ranks have no spread: each is compared with the other by the margin alone (the lateness and
  // step-by-step tests still apply), and its excess is over the other, not over their mean.
  const bool pair = local.size() == 2;
  for (uint32_t r = 0; r < metrics.size(); ++r) {
    // Each rank against its peers, once there are enough of them for a spread: with few ranks the
    // rank itself, and one peer that is fast for its own reasons, widen the MAD of all of them
    // past the rank's excess (4 ranks whose locals are 26, 35, 37 and 53 ms: a threshold of 24 ms
    // over all four, of 9 ms over the other three).
    s.compared.push_back(local.size() >= 4 ? peers.Without(local[r]) : ComparedWith(local, r, s.local));
    const RobustStats& compared = s.compared.back();
    s.compared_threshold_ns.push_back(rule.Threshold(compared));
    const double excess = local[r] - (pair ? compared.median : s.local.median);
    const bool outlier = rule.IsHigh(local[r], compared);
    s.excess_ns.push_back(excess);
    s.outlier.push_back(outlier);
    s.slow.push_back(outlier && excess >= min_excess_ns && ArrivesLate(arrival.ranks[r], metrics[r], excess));
  }
  s.groups = GroupSlowRanks(s, hosts);
  return s;
}

}  // namespace rankscope
