#include "rankscope/cluster/significance.h"

#include <algorithm>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

// The group's smallest value against its peers, step by step, and the verdict over the steps.
class ExcessTally {
 public:
  void Add(double smallest, const PeerBand& peers) {
    excess_.push_back(smallest - peers.median);
    if (smallest - peers.median > peers.iqr) ++exceeding_;
  }
  StepSignificance Verdict(size_t steps) const {
    StepSignificance out;
    out.exceeding = exceeding_;
    out.steps = steps;
    out.median_excess_ns = ComputeRobustStats(excess_).median;
    out.significant = steps > 0 && static_cast<double>(exceeding_) > kSignificantStepShare * static_cast<double>(steps);
    return out;
  }

 private:
  std::vector<double> excess_;
  size_t exceeding_ = 0;
};

}  // namespace

StepSignificance TestStepExcess(const std::vector<std::vector<double>>& values, const std::vector<bool>& group) {
  StepSignificance out;
  if (values.empty() || std::count(group.begin(), group.end(), false) == 0) return out;
  const size_t steps = values.front().size();
  ExcessTally tally;
  for (size_t s = 0; s < steps; ++s) {
    const std::vector<double> column = StepColumn(values, s);
    const PeerBand peers = PeersOf(column, group);
    double smallest = -1;
    for (size_t r = 0; r < column.size(); ++r) {
      if (group[r] && (smallest < 0 || column[r] < smallest)) smallest = column[r];
    }
    if (smallest < 0) return out;
    tally.Add(smallest, peers);
  }
  return tally.Verdict(steps);
}

namespace {

// Interpolated quantile (step_series.cc) of `sorted` without the elements at `skip` (ascending).
double QuantileWithout(const std::vector<double>& sorted, const std::vector<size_t>& skip, double q) {
  const size_t n = sorted.size() - skip.size();
  if (n == 0) return 0;
  auto at = [&](size_t i) {  // the i-th of the rest
    for (size_t p : skip) {
      if (p > i) break;
      ++i;
    }
    return sorted[i];
  };
  const double pos = q * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, n - 1);
  const double low = at(lo);
  return low + (pos - static_cast<double>(lo)) * (at(hi) - low);
}

}  // namespace

StepExcessTester::StepExcessTester(const std::vector<std::vector<double>>& values) : values_(values) {
  if (values.empty()) return;
  for (size_t s = 0; s < values.front().size(); ++s) {
    sorted_.push_back(StepColumn(values, s));
    std::sort(sorted_.back().begin(), sorted_.back().end());
  }
}

PeerBand StepExcessTester::Peers(size_t step, const std::vector<uint32_t>& members) const {
  const std::vector<double>& sorted = sorted_[step];
  // Where the members' values sit in the sorted column (one position per member, equal values
  // at consecutive positions): the rest is the column PeersOf sorts.
  std::vector<double> mine;
  for (uint32_t r : members) {
    if (r < values_.size()) mine.push_back(step < values_[r].size() ? values_[r][step] : 0);
  }
  std::sort(mine.begin(), mine.end());
  std::vector<size_t> skip;
  for (size_t i = 0; i < mine.size(); ++i) {
    const size_t first = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), mine[i]) - sorted.begin());
    skip.push_back(i > 0 && mine[i - 1] == mine[i] ? skip.back() + 1 : first);
  }
  PeerBand b;
  b.count = sorted.size() - skip.size();
  b.median = QuantileWithout(sorted, skip, 0.5);
  b.iqr = QuantileWithout(sorted, skip, 0.75) - QuantileWithout(sorted, skip, 0.25);
  return b;
}

StepSignificance StepExcessTester::Test(const std::vector<uint32_t>& members) const {
  StepSignificance out;
  if (values_.empty() || members.size() >= values_.size()) return out;
  const size_t steps = values_.front().size();
  ExcessTally tally;
  for (size_t s = 0; s < steps; ++s) {
    const PeerBand peers = Peers(s, members);
    double smallest = -1;
    for (uint32_t r : members) {
      const double v = s < values_[r].size() ? values_[r][s] : 0;
      if (smallest < 0 || v < smallest) smallest = v;
    }
    if (smallest < 0) return out;
    tally.Add(smallest, peers);
  }
  return tally.Verdict(steps);
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
