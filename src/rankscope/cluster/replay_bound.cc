#include "rankscope/cluster/replay_bound.h"

#include <algorithm>

#include "rankscope/cluster/findings.h"

namespace rankscope {
namespace {

bool Bounded(const Finding& f) {
  const bool about_ranks = f.kind == FindingKind::kSlowRank || f.kind == FindingKind::kSlowNode ||
                           f.kind == FindingKind::kSlowFunction || f.kind == FindingKind::kExtraWork;
  return about_ranks && !f.ranks.empty() && f.cost.saving_ns > 0 && f.cost.method != CostMethod::kWhatIfReplay &&
         f.cost.method != CostMethod::kAddedWork;
}

// Rank indices of `ranks`, or empty when one is not among `rank_numbers`.
std::vector<uint32_t> Indices(const std::vector<int64_t>& rank_numbers, const std::vector<int64_t>& ranks) {
  std::vector<uint32_t> out;
  for (int64_t r : ranks) {
    const auto it = std::find(rank_numbers.begin(), rank_numbers.end(), r);
    if (it == rank_numbers.end()) return {};
    out.push_back(static_cast<uint32_t>(it - rank_numbers.begin()));
  }
  return out;
}

}  // namespace

bool OutrunsPeersSteps(const StepSeries& series, const std::vector<uint32_t>& ranks) {
  for (uint32_t r : ranks) {
    if (r >= series.ranks()) continue;
    for (size_t s = 0; s < series.steps() && s < series.step_ns.size(); ++s) {
      if (series.local_ns[r][s] > (1 + kOutrunShare) * series.step_ns[s]) return true;
    }
  }
  return false;
}

void BoundByReplay(const StepGraph& graph, const StepSeries& series, const std::vector<int64_t>& rank_numbers,
                   double min_excess_ns, std::vector<Finding>* findings) {
  if (!graph.built()) return;
  for (Finding& f : *findings) {
    if (!Bounded(f)) continue;
    const std::vector<uint32_t> fixed = Indices(rank_numbers, f.ranks);
    if (fixed.empty() || !OutrunsPeersSteps(series, fixed)) continue;
    const ReplayWhatIf w = graph.RanksLikePeers(fixed);
    if (w.step_ns <= 0 || w.saving_ns >= f.cost.saving_ns) continue;
    Evidence e;
    e.kind = EvidenceKind::kWhatIf;
    e.detail = "replay_bound";
    e.Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns)
        .Set("per_step_saving_ns", f.cost.saving_ns);
    f.evidence.push_back(std::move(e));
    f.cost.saving_ns = w.saving_ns;
    f.cost.estimated_step_ns = f.cost.step_ns - w.saving_ns;
    f.severity = f.cost.step_ns > 0 && w.saving_ns >= kCriticalShare * f.cost.step_ns ? Severity::kCritical
                 : w.saving_ns >= min_excess_ns                                           ? Severity::kWarning
                                                                                          : Severity::kInfo;
  }
}

void BoundByReplay(const StepGraph& graph, const StepSeries& series, const std::vector<int64_t>& rank_numbers,
                   CombinedWhatIf* all) {
  if (!graph.built() || all->findings == 0) return;
  const std::vector<uint32_t> fixed = Indices(rank_numbers, all->ranks);
  if (fixed.empty() || !OutrunsPeersSteps(series, fixed)) return;
  const ReplayWhatIf w = graph.RanksLikePeers(fixed);
  if (w.step_ns <= 0 || w.saving_ns >= all->what_if.saving_ns) return;
  all->what_if.saving_ns = w.saving_ns;
  all->what_if.estimated_step_ns = all->what_if.step_ns - w.saving_ns;
}

}  // namespace rankscope
