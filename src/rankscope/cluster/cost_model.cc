#include "rankscope/cluster/cost_model.h"

#include <algorithm>
#include <cmath>

#include "rankscope/cluster/significance.h"

namespace rankscope {
namespace {

// A costed finding whose saving is at least this share of the step is critical (as findings.h).
constexpr double kCriticalStepShare = 0.10;

std::vector<bool> Alone(size_t n, uint32_t r) {
  std::vector<bool> g(n, false);
  g[r] = true;
  return g;
}

double PeerMedian(const StepSeries& series, uint32_t rank, size_t s) {
  return PeersOf(StepColumn(series.local_ns, s), Alone(series.ranks(), rank)).median;
}

int RankIndex(const std::vector<int64_t>& rank_numbers, int64_t rank) {
  for (size_t i = 0; i < rank_numbers.size(); ++i) {
    if (rank_numbers[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

// The function a finding is about: its subject's evidence, else the first function it lists.
const Evidence* LeadFunction(const Finding& f) {
  if (f.ranks.empty()) return nullptr;
  const Evidence* first = nullptr;
  for (const Evidence& e : f.evidence) {
    if (e.kind != EvidenceKind::kFunction || e.rank != f.ranks.front()) continue;
    if (e.subject == f.subject) return &e;
    if (!first) first = &e;
  }
  return f.subject.empty() ? first : nullptr;
}

// The per-rank reduction a finding stands for, or empty when the finding does not say.
StepTable ReductionOf(const StepSeries& series, const Finding& f, uint32_t rank) {
  if (f.subject_kind == "phase") {
    for (const Evidence& e : f.evidence) {
      if (e.kind != EvidenceKind::kPhase || e.subject != f.subject) continue;
      for (int p = 0; p < kNumStepPhases; ++p) {
        if (StepPhaseName(static_cast<StepPhase>(p)) == f.subject) {
          return WithoutPhaseExcess(series, rank, PhaseTable(series, static_cast<StepPhase>(p), e.detail == "GPU"));
        }
      }
    }
    return {};
  }
  if (f.cost.added_ns <= 0) return {};
  // A function the rank calls in fewer steps than there are: its excess is in those steps.
  if (const Evidence* lead = LeadFunction(f)) {
    const double calls = std::round(lead->Get("calls") * static_cast<double>(series.steps()));
    if (calls >= 1 && calls < static_cast<double>(series.steps())) {
      return WithoutIntermittentExcess(series, rank, f.cost.added_ns, static_cast<size_t>(calls));
    }
  }
  return WithoutExcess(series, rank, f.cost.added_ns);
}

}  // namespace

WhatIf WhatIfByStep(const StepSeries& series, const StepTable& after, double step_ns) {
  WhatIf w;
  w.step_ns = step_ns;
  double sum = 0;
  for (size_t s = 0; s < series.steps(); ++s) {
    double before_max = 0, after_max = 0;
    for (size_t r = 0; r < series.ranks(); ++r) {
      before_max = std::max(before_max, series.local_ns[r][s]);
      after_max = std::max(after_max, after[r][s]);
    }
    sum += std::max(0.0, before_max - after_max);
  }
  w.saving_ns = series.steps() > 0 ? sum / static_cast<double>(series.steps()) : 0;
  w.estimated_step_ns = step_ns - w.saving_ns;
  return w;
}

StepTable LikePeers(const StepSeries& series, const std::vector<bool>& group) {
  StepTable out = series.local_ns;
  for (size_t s = 0; s < series.steps(); ++s) {
    const double median = PeersOf(StepColumn(series.local_ns, s), group).median;
    for (size_t r = 0; r < series.ranks(); ++r) {
      if (group[r]) out[r][s] = std::min(out[r][s], median);
    }
  }
  return out;
}

StepTable WithoutExcess(const StepSeries& series, uint32_t rank, double excess_ns) {
  StepTable out = series.local_ns;
  for (size_t s = 0; s < series.steps(); ++s) {
    const double local = out[rank][s];
    out[rank][s] = std::max(std::min(local, PeerMedian(series, rank, s)), local - excess_ns);
  }
  return out;
}

StepTable WithoutIntermittentExcess(const StepSeries& series, uint32_t rank, double excess_ns, size_t calls) {
  StepTable out = series.local_ns;
  const size_t steps = series.steps();
  if (calls == 0 || steps == 0) return out;
  std::vector<std::pair<double, size_t>> by_excess;  // (local - peers' median, step)
  for (size_t s = 0; s < steps; ++s) by_excess.emplace_back(out[rank][s] - PeerMedian(series, rank, s), s);
  calls = std::min(calls, steps);
  std::partial_sort(by_excess.begin(), by_excess.begin() + static_cast<std::ptrdiff_t>(calls), by_excess.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  const double per_call = excess_ns * static_cast<double>(steps) / static_cast<double>(calls);
  for (size_t k = 0; k < calls; ++k) {
    const size_t s = by_excess[k].second;
    const double local = out[rank][s];
    out[rank][s] = std::max(std::min(local, PeerMedian(series, rank, s)), local - per_call);
  }
  return out;
}

StepTable WithoutGroupExcess(const StepSeries& series, const std::vector<bool>& group,
                             const std::vector<double>& excess_ns) {
  StepTable out = series.local_ns;
  for (size_t s = 0; s < series.steps(); ++s) {
    const double median = PeersOf(StepColumn(series.local_ns, s), group).median;
    for (size_t r = 0; r < series.ranks(); ++r) {
      if (!group[r]) continue;
      const double local = out[r][s];
      out[r][s] = std::max(std::min(local, median), local - excess_ns[r]);
    }
  }
  return out;
}

StepTable WithoutPhaseExcess(const StepSeries& series, uint32_t rank, const StepTable& phase) {
  StepTable out = series.local_ns;
  const std::vector<bool> alone = Alone(series.ranks(), rank);
  for (size_t s = 0; s < series.steps(); ++s) {
    const double excess = phase[rank][s] - PeersOf(StepColumn(phase, s), alone).median;
    if (excess > 0) out[rank][s] = std::max(0.0, out[rank][s] - excess);
  }
  return out;
}

WhatIf WhatIfGroupLikePeers(const StepSeries& series, const std::vector<bool>& group, double step_ns) {
  return WhatIfByStep(series, LikePeers(series, group), step_ns);
}

void CostSlowGroupsByStep(const StepSeries& series, const std::vector<int64_t>& rank_numbers, double step_ns,
                          double min_excess_ns, std::vector<Finding>* findings) {
  if (series.steps() == 0 || series.ranks() < 2 || series.ranks() != rank_numbers.size()) return;
  for (Finding& f : *findings) {
    if ((f.kind != FindingKind::kSlowRank && f.kind != FindingKind::kSlowNode) ||
        f.cost.method != CostMethod::kWhatIfLikeMedian) {
      continue;
    }
    const auto like_median = std::find_if(f.evidence.begin(), f.evidence.end(), [](const Evidence& e) {
      return e.kind == EvidenceKind::kWhatIf && e.detail == "like_median";
    });
    if (like_median == f.evidence.end()) continue;  // costed otherwise (a slow host is per step already)
    std::vector<bool> group(series.ranks(), false);
    bool known = true;
    for (int64_t r : f.ranks) {
      const int i = RankIndex(rank_numbers, r);
      if (i < 0) known = false;
      else group[static_cast<size_t>(i)] = true;
    }
    if (!known) continue;
    const WhatIf w = WhatIfGroupLikePeers(series, group, step_ns);
    f.cost.saving_ns = w.saving_ns;
    f.cost.step_ns = w.step_ns;
    f.cost.estimated_step_ns = w.estimated_step_ns;
    f.severity = w.step_ns > 0 && w.saving_ns >= kCriticalStepShare * w.step_ns ? Severity::kCritical
                 : w.saving_ns >= min_excess_ns                                  ? Severity::kWarning
                                                                                 : Severity::kInfo;
    like_median->detail = "per_step";
    like_median->Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns)
        .Set("steps", static_cast<double>(series.steps()));
  }
}

void CostExtraWork(const StepSeries& series, const ArrivalAnalysis& arrival, const std::vector<int64_t>& rank_numbers,
                   double step_ns,
                   double min_excess_ns, std::vector<Finding>* findings) {
  if (series.steps() == 0 || series.ranks() < 2) return;
  for (Finding& f : *findings) {
    if (f.kind != FindingKind::kExtraWork || f.cost.method != CostMethod::kAddedWork || f.ranks.size() != 1) continue;
    const int rank = RankIndex(rank_numbers, f.ranks.front());
    if (rank < 0) continue;
    if (static_cast<size_t>(rank) < arrival.ranks.size()) {
      const RankArrival& a = arrival.ranks[rank];
      if (a.instances > 0 && a.late_sum_ns == 0) continue;  // on time at every collective
    }
    const StepTable after = ReductionOf(series, f, static_cast<uint32_t>(rank));
    if (after.empty()) continue;
    const WhatIf w = WhatIfByStep(series, after, step_ns);
    if (w.saving_ns < min_excess_ns) continue;
    f.cost.method = CostMethod::kWhatIfFaster;
    f.cost.saving_ns = w.saving_ns;
    f.cost.step_ns = w.step_ns;
    f.cost.estimated_step_ns = w.estimated_step_ns;
    f.severity = w.step_ns > 0 && w.saving_ns >= kCriticalStepShare * w.step_ns ? Severity::kCritical
                                                                                 : Severity::kWarning;
    Evidence e;
    e.kind = EvidenceKind::kWhatIf;
    e.detail = "per_step";
    e.Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns)
        .Set("steps", static_cast<double>(series.steps()));
    f.evidence.push_back(std::move(e));
  }
}

}  // namespace rankscope
