#include "rankscope/cluster/gpu_work_cost.h"

#include <algorithm>
#include <cmath>

#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/findings.h"

namespace rankscope {
namespace {

// The excess per step of `f`'s subject on each of its ranks (rank indices in `fixed`), from its
// function evidence on that rank; a one-rank finding's added time where the evidence is missing.
bool RanksAndExcess(const Finding& f, const std::vector<int64_t>& rank_numbers, std::vector<uint32_t>* fixed,
                    std::vector<double>* excess) {
  for (int64_t r : f.ranks) {
    const auto it = std::find(rank_numbers.begin(), rank_numbers.end(), r);
    if (it == rank_numbers.end()) return false;
    double e = FunctionExcessOn(f, r);
    if (e < 0 && f.ranks.size() == 1) e = f.cost.added_ns;
    if (e <= 0) return false;
    fixed->push_back(static_cast<uint32_t>(it - rank_numbers.begin()));
    excess->push_back(e);
  }
  return !fixed->empty();
}

void SetReplayedCost(const ReplayWhatIf& w, double min_excess_ns, Finding* f) {
  // The cost it had, unless a what-if evidence of the finding already shows it.
  const bool shown = std::any_of(f->evidence.begin(), f->evidence.end(), [&](const Evidence& e) {
    return e.kind == EvidenceKind::kWhatIf && std::fabs(e.Get("saving_ns") - f->cost.saving_ns) < 1.0;
  });
  if (f->cost.method != CostMethod::kAddedWork && !shown) {
    Evidence before;
    before.kind = EvidenceKind::kWhatIf;
    before.detail = "previous_estimate";
    before.Set("step_ns", f->cost.step_ns).Set("saving_ns", f->cost.saving_ns)
        .Set("estimated_step_ns", f->cost.estimated_step_ns);
    f->evidence.push_back(std::move(before));
  }
  if (f->cost.step_ns <= 0) f->cost.step_ns = w.step_ns;
  f->cost.method = CostMethod::kWhatIfFaster;
  f->cost.saving_ns = std::clamp(w.saving_ns, 0.0, f->cost.step_ns);
  f->cost.estimated_step_ns = f->cost.step_ns - f->cost.saving_ns;
  f->severity = f->cost.saving_ns < min_excess_ns                       ? Severity::kInfo
                : f->cost.saving_ns >= kCriticalShare * f->cost.step_ns ? Severity::kCritical
                                                                        : Severity::kWarning;
  Evidence e;
  e.kind = EvidenceKind::kWhatIf;
  e.detail = "replay_excess";
  e.Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns);
  f->evidence.push_back(std::move(e));
}

}  // namespace

bool IsGpuWork(const Finding& f) {
  return f.subject_kind == "kernel" || f.subject_kind == "kernels_of_op" || f.subject_kind == "memory_op";
}

bool RunsOnGpu(const RankSummary& rank) { return rank.gpu.activities > 0; }

bool SharesGpu(const std::vector<RankSummary>& ranks, const std::vector<RankHost>& hosts, size_t r) {
  if (r >= ranks.size() || r >= hosts.size() || hosts[r].source == HostSource::kNone) return false;
  const std::vector<int32_t>& mine = ranks[r].gpu.devices;
  for (size_t i = 0; i < ranks.size() && i < hosts.size(); ++i) {
    if (i == r || hosts[i].source == HostSource::kNone || hosts[i].host != hosts[r].host) continue;
    for (int32_t d : ranks[i].gpu.devices) {
      if (std::find(mine.begin(), mine.end(), d) != mine.end()) return true;
    }
  }
  return false;
}

void CostWorkOfGpuRanksByReplay(const GpuWorkCostInput& in, std::vector<Finding>* findings) {
  if (!in.replay->faithful()) return;
  for (Finding& f : *findings) {
    if (f.kind != FindingKind::kSlowFunction && f.kind != FindingKind::kExtraWork) continue;
    std::vector<uint32_t> fixed;
    std::vector<double> excess;
    if (!RanksAndExcess(f, *in.rank_numbers, &fixed, &excess)) continue;
    // Host work of a rank that runs on a GPU too: its step ends where the host next waits for it.
    if (!IsGpuWork(f) && !std::all_of(fixed.begin(), fixed.end(), [&](uint32_t r) {
          return r < in.ranks->size() && RunsOnGpu((*in.ranks)[r]);
        })) {
      continue;
    }
    if (std::any_of(fixed.begin(), fixed.end(), [&](uint32_t r) { return SharesGpu(*in.ranks, *in.hosts, r); })) {
      continue;
    }
    const ReplayWhatIf w = in.graph->RanksWithoutExcess(fixed, excess);
    if (w.step_ns <= 0) continue;
    // Extra work no peer was seen to wait for stays uncosted unless the replay shows a wait.
    if (f.cost.method == CostMethod::kAddedWork && w.saving_ns < in.min_excess_ns) continue;
    SetReplayedCost(w, in.min_excess_ns, &f);
  }
}

}  // namespace rankscope
