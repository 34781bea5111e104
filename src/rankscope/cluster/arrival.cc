#include "rankscope/cluster/arrival.h"

#include <algorithm>

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

}  // namespace

ArrivalAnalysis AnalyzeArrivals(const std::vector<RankSummary>& ranks, const CollectiveMatching& matching,
                                const ClockEstimate& clock) {
  ArrivalAnalysis out;
  out.ranks.resize(ranks.size());
  std::vector<std::vector<int64_t>> lateness(ranks.size());
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
    for (const Arrival& x : a) {
      lateness[x.rank].push_back(x.t - m.median_ns);
      out.ranks[x.rank].late_sum_ns += std::max<int64_t>(0, x.t - m.median_ns);
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
  if (!skews.empty()) {
    out.max_skew_ns = *std::max_element(skews.begin(), skews.end());
    out.median_skew_ns = ExactMedian(skews);
  }
  return out;
}

}  // namespace rankscope
