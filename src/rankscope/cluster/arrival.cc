#include "rankscope/cluster/arrival.h"

#include <algorithm>
#include <map>

#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

struct Arrival {
  int64_t t;
  uint32_t rank;
};

InstanceArrival Measure(uint32_t index, std::vector<Arrival>& a) {
  std::sort(a.begin(), a.end(), [](const Arrival& x, const Arrival& y) { return x.t < y.t || (x.t == y.t && x.rank < y.rank); });
  InstanceArrival m;
  m.matched = index;
  m.first_ns = a.front().t;
  m.first_rank = a.front().rank;
  m.last_ns = a.back().t;
  m.skew_ns = m.last_ns - m.first_ns;
  m.last_gap_ns = a.back().t - a[a.size() - 2].t;
  m.last_rank = m.last_gap_ns > 0 ? a.back().rank : kNoRank;
  std::vector<int64_t> times;
  for (const Arrival& x : a) times.push_back(x.t);
  m.median_ns = ExactMedian(times);
  return m;
}

// The profiler step of an instance (-1 without steps: the whole window is one "step").
int64_t StepOf(const std::vector<RankSummary>& ranks, const MatchedCollective& c) {
  if (c.step >= 0) return c.step;
  const Participant& p = c.participants.front();
  return ranks[p.rank].collectives[p.instance].step;
}

// Per step: which ranks' summed lateness stands out among the participants'. Of two, the one that
// was later (there is no spread to stand out from).
void CountLateSteps(const std::map<int64_t, std::map<uint32_t, int64_t>>& late_by_step, const OutlierRule& rule,
                    std::vector<RankArrival>* ranks) {
  for (const auto& [step, late] : late_by_step) {
    std::vector<double> values;
    for (const auto& [rank, ns] : late) values.push_back(static_cast<double>(ns));
    const RobustStats stats = ComputeRobustStats(values);
    for (const auto& [rank, ns] : late) {
      ++(*ranks)[rank].arrival_steps;
      const bool stands_out =
          values.size() == 2 ? ns > std::min(values[0], values[1]) : rule.IsHigh(static_cast<double>(ns), stats);
      if (ns > 0 && stands_out) ++(*ranks)[rank].late_steps;
    }
  }
}

}  // namespace

ArrivalAnalysis AnalyzeArrivals(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                                const ClockEstimate& clock, const OutlierRule& rule) {
  ArrivalAnalysis out;
  out.ranks.resize(ranks.size());
  std::vector<std::vector<int64_t>> lateness(ranks.size());
  std::map<int64_t, std::map<uint32_t, int64_t>> late_by_step;  // step -> rank -> positive lateness
  std::vector<Arrival> a;
  std::vector<int64_t> skews;
  for (uint32_t i = 0; i < matching.instances.size(); ++i) {
    const MatchedCollective& c = matching.instances[i];
    if (!c.complete) continue;
    a.clear();
    for (const Participant& p : c.participants) {
      a.push_back({ranks[p.rank].collectives[p.instance].start_ns - clock.offset_of[p.rank], p.rank});
    }
    const InstanceArrival m = Measure(i, a);
    std::map<uint32_t, int64_t>& step_late = late_by_step[StepOf(ranks, c)];
    for (const Arrival& x : a) {
      lateness[x.rank].push_back(x.t - m.median_ns);
      out.ranks[x.rank].late_sum_ns += std::max<int64_t>(0, x.t - m.median_ns);
      step_late[x.rank] += std::max<int64_t>(0, x.t - m.median_ns);
      ++out.ranks[x.rank].instances;
    }
    if (m.last_rank != kNoRank) {
      ++out.ranks[m.last_rank].last_votes;
      out.ranks[m.last_rank].imposed_wait_ns += m.last_gap_ns;
    }
    skews.push_back(m.skew_ns);
    out.instances.push_back(m);
  }
  for (size_t r = 0; r < ranks.size(); ++r) out.ranks[r].lateness_ns = ExactMedian(lateness[r]);
  CountLateSteps(late_by_step, rule, &out.ranks);
  if (!skews.empty()) {
    out.max_skew_ns = *std::max_element(skews.begin(), skews.end());
    out.median_skew_ns = ExactMedian(skews);
  }
  return out;
}

}  // namespace rankscope
