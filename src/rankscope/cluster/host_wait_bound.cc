#include "rankscope/cluster/host_wait_bound.h"

#include <algorithm>

#include "rankscope/analysis/interval_set.h"
#include "rankscope/cluster/findings.h"
#include "rankscope/cluster/gpu_work_cost.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {
namespace {

bool Bounded(const Finding& f) { return IsAboutRanks(f) && f.cost.saving_ns > 0; }

// Per rank and aligned step: the step's duration and the host's waits in it.
struct HostSteps {
  std::vector<std::vector<double>> step_ns;  // [rank][step]
  std::vector<std::vector<double>> wait_ns;  // [rank][step]
};

// The time in [start, end) that the rank's collectives on the host (a CPU backend's, gloo's
// with CUDA tensors too) cover: there its host waits for its peers, not for its GPU.
int64_t HostCollectiveNs(const RankSummary& r, int64_t start, int64_t end) {
  std::vector<Interval> spans;
  for (const CollectiveInstance& c : r.collectives) {
    if (c.stream < 0 && c.end_ns > start && c.start_ns < end) {
      spans.push_back({std::max(c.start_ns, start), std::min(c.end_ns, end)});
    }
  }
  return IntervalSet::Union(spans).Length();
}

// Empty when the bound does not apply: a rank without GPU work or with collectives left out of
// its summary, no aligned steps.
HostSteps Measure(const std::vector<RankSummary>& ranks, const StepSeries& series) {
  HostSteps out;
  if (series.steps() == 0 || series.ranks() != ranks.size() || ranks.empty()) return out;
  if (!std::all_of(ranks.begin(), ranks.end(), [](const RankSummary& r) {
        return RunsOnGpu(r) && r.omitted_collectives == 0;
      })) {
    return out;
  }
  for (const RankSummary& r : ranks) {
    std::vector<double>& step = out.step_ns.emplace_back(series.steps(), 0.0);
    std::vector<double>& wait = out.wait_ns.emplace_back(series.steps(), 0.0);
    for (const StepSummary& st : r.steps) {
      const auto it = std::lower_bound(series.numbers.begin(), series.numbers.end(), st.number);
      if (it == series.numbers.end() || *it != st.number) continue;
      const size_t s = static_cast<size_t>(it - series.numbers.begin());
      step[s] = static_cast<double>(st.duration_ns());
      wait[s] = static_cast<double>(st.host_gpu_wait_ns + HostCollectiveNs(r, st.start_ns, st.end_ns));
    }
  }
  return out;
}

// The mean over the steps of B (the file comment) for a fix of ranks `fixed` (indices): in each
// step, the longest rank's step minus the longest any rank's step can still be — its step less its
// waits and, for the fixed ranks, less their host time beyond their peers'.
double Bound(const HostSteps& h, const std::vector<uint32_t>& fixed) {
  const size_t ranks = h.step_ns.size(), steps = h.step_ns.front().size();
  std::vector<bool> in_fix(ranks, false);
  for (uint32_t r : fixed) in_fix[r] = true;
  double sum = 0;
  std::vector<double> peers;
  for (size_t s = 0; s < steps; ++s) {
    peers.clear();
    for (size_t r = 0; r < ranks; ++r) {
      if (!in_fix[r]) peers.push_back(h.step_ns[r][s] - h.wait_ns[r][s]);
    }
    const double peers_host = peers.empty() ? 0.0 : ComputeRobustStats(peers).median;
    double longest = 0, floor = 0;
    for (size_t r = 0; r < ranks; ++r) {
      const double host = h.step_ns[r][s] - h.wait_ns[r][s];
      const double own = in_fix[r] && !peers.empty() ? std::max(0.0, host - peers_host) : 0.0;
      longest = std::max(longest, h.step_ns[r][s]);
      floor = std::max(floor, host - own);
    }
    sum += std::max(0.0, longest - floor);
  }
  return sum / static_cast<double>(steps);
}

void Cap(double bound_ns, double min_excess_ns, Finding* f) {
  Evidence e;
  e.kind = EvidenceKind::kWhatIf;
  e.detail = "host_wait_bound";
  e.Set("step_ns", f->cost.step_ns).Set("estimated_step_ns", f->cost.step_ns - bound_ns).Set("saving_ns", bound_ns)
      .Set("per_step_saving_ns", f->cost.saving_ns);
  f->evidence.push_back(std::move(e));
  f->cost.saving_ns = bound_ns;
  f->cost.estimated_step_ns = f->cost.step_ns - bound_ns;
  f->severity = BoundedSeverity(bound_ns, f->cost.step_ns, min_excess_ns);
}

}  // namespace

void BoundByHostWaits(const std::vector<RankSummary>& ranks, const StepSeries& series,
                      const std::vector<int64_t>& rank_numbers, double min_excess_ns, std::vector<Finding>* findings) {
  const HostSteps h = Measure(ranks, series);
  if (h.step_ns.empty()) return;
  for (Finding& f : *findings) {
    if (!Bounded(f)) continue;
    const std::vector<uint32_t> fixed = RankIndices(rank_numbers, f.ranks);
    if (fixed.empty()) continue;
    const double bound = Bound(h, fixed);
    if (bound < f.cost.saving_ns) Cap(bound, min_excess_ns, &f);
  }
}

void BoundByHostWaits(const std::vector<RankSummary>& ranks, const StepSeries& series,
                      const std::vector<int64_t>& rank_numbers, CombinedWhatIf* all) {
  const HostSteps h = Measure(ranks, series);
  if (h.step_ns.empty() || all->findings == 0) return;
  const std::vector<uint32_t> fixed = RankIndices(rank_numbers, all->ranks);
  if (fixed.empty()) return;
  const double bound = Bound(h, fixed);
  if (bound >= all->what_if.saving_ns) return;
  all->what_if.saving_ns = bound;
  all->what_if.estimated_step_ns = all->what_if.step_ns - bound;
}

}  // namespace rankscope
