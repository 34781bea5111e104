#include "rankscope/cluster/replay_bound.h"

#include <algorithm>

#include "rankscope/cluster/findings.h"

namespace rankscope {
namespace {

bool Bounded(const Finding& f) {
  return IsAboutRanks(f) && f.cost.saving_ns > 0 && f.cost.method != CostMethod::kWhatIfReplay &&
         f.cost.method != CostMethod::kAddedWork;
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
    const std::vector<uint32_t> fixed = RankIndices(rank_numbers, f.ranks);
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
    f.severity = BoundedSeverity(w.saving_ns, f.cost.step_ns, min_excess_ns);
  }
}

void BoundByReplay(const StepGraph& graph, const StepSeries& series, const std::vector<int64_t>& rank_numbers,
                   CombinedWhatIf* all) {
  if (!graph.built() || all->findings == 0) return;
  const std::vector<uint32_t> fixed = RankIndices(rank_numbers, all->ranks);
  if (fixed.empty() || !OutrunsPeersSteps(series, fixed)) return;
  const ReplayWhatIf w = graph.RanksLikePeers(fixed);
  if (w.step_ns <= 0 || w.saving_ns >= all->what_if.saving_ns) return;
  all->what_if.saving_ns = w.saving_ns;
  all->what_if.estimated_step_ns = all->what_if.step_ns - w.saving_ns;
}

}  // namespace rankscope
