#include "rankscope/cluster/cost_model.h"

#include <algorithm>
#include <cmath>

#include "rankscope/cluster/function_outliers.h"
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

// The number of steps that hold `excess_ns` per step of a rank's work when its excess over its
// peers' median is concentrated in a few steps (the fewest steps, largest excess first, whose
// excesses add up to the finding's total, within 10 %: the finding's excess is over the median
// rank's time, a step's over that step's peers), or 0 when that takes more than half the steps: the
// work then runs in most steps, and is taken from each. A function called several times in some
// steps only (a checkpoint every third step saving eight tensors: 2.7 calls per step) is
// intermittent although its call count is not below one per step.
size_t StepsHoldingExcess(const StepSeries& series, uint32_t rank, double excess_ns) {
  const size_t steps = series.steps();
  std::vector<double> excess;
  for (size_t s = 0; s < steps; ++s) {
    excess.push_back(std::max(0.0, series.local_ns[rank][s] - PeerMedian(series, rank, s)));
  }
  std::sort(excess.rbegin(), excess.rend());
  const double total = excess_ns * static_cast<double>(steps);
  double held = 0;
  for (size_t k = 0; k < steps && 2 * k < steps; ++k) {
    held += excess[k];
    if (held >= 0.9 * total) return k + 1;
  }
  return 0;
}

// The number of steps a function finding's lead function is called in, when the rank calls it in
// fewer steps than there are (its calls per step times the steps, below the steps); else 0.
size_t StepsCalledIn(const StepSeries& series, const Finding& f) {
  const Evidence* lead = f.LeadFunction();
  if (!lead) return 0;
  const double calls = std::round(lead->Get("calls") * static_cast<double>(series.steps()));
  return calls >= 1 && calls < static_cast<double>(series.steps()) ? static_cast<size_t>(calls) : 0;
}

// The number of steps that hold a function finding's excess on `rank`: those it is called in
// (StepsCalledIn), or, for work the peers do not do, the few steps whose excess adds up to it
// (StepsHoldingExcess); 0 when it runs in most steps. A function the peers run too, slower on the
// rank, is read by its calls only: its excess in every step is a few milliseconds inside the
// ranks' step-to-step spread, and a few long steps of the rank's are as often that spread (a
// clean run's oversleeping emulated device: 2.2 ms/step spread over every step, 2.7 in the few).
size_t IntermittentSteps(const StepSeries& series, const Finding& f, uint32_t rank) {
  if (const size_t k = StepsCalledIn(series, f); k > 0) return k;
  return f.kind == FindingKind::kSlowFunction ? 0 : StepsHoldingExcess(series, rank, f.cost.added_ns);
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
  if (const size_t k = IntermittentSteps(series, f, rank); k > 0) {
    return WithoutIntermittentExcess(series, rank, f.cost.added_ns, k);
  }
  return WithoutExcess(series, rank, f.cost.added_ns);
}

// What finding `f` takes off each [rank][step] of the local times (0 where it says nothing), or
// empty when it is not a finding about ranks that the step model can redo: slow ranks and nodes
// with a cost, functions with a cost or with work added (an extra_work finding that no peer
// measurably waits for alone can be what sets the pace once another fault is fixed).
StepTable ReductionsOf(const StepSeries& series, const std::vector<int64_t>& rank_numbers, const Finding& f) {
  const bool group = f.kind == FindingKind::kSlowRank || f.kind == FindingKind::kSlowNode;
  const bool function = f.kind == FindingKind::kSlowFunction || f.kind == FindingKind::kExtraWork;
  if (f.cost.method == CostMethod::kWhatIfReplay) return {};
  if (!(group && f.cost.saving_ns > 0) && !(function && (f.cost.saving_ns > 0 || f.cost.added_ns > 0))) return {};
  std::vector<bool> members(series.ranks(), false);
  for (int64_t r : f.ranks) {
    const int i = RankIndex(rank_numbers, r);
    if (i < 0) return {};
    members[static_cast<size_t>(i)] = true;
  }
  StepTable after;
  if (group) {
    after = LikePeers(series, members);
  } else if (f.ranks.size() == 1) {
    after = ReductionOf(series, f, static_cast<uint32_t>(RankIndex(rank_numbers, f.ranks.front())));
  } else {  // a function slower on several ranks: each loses its own excess
    std::vector<double> excess(series.ranks(), 0);
    for (int64_t r : f.ranks) {
      excess[static_cast<size_t>(RankIndex(rank_numbers, r))] = std::max(0.0, FunctionExcessOn(f, r));
    }
    after = WithoutGroupExcess(series, members, excess);
  }
  if (after.empty()) return {};
  for (size_t r = 0; r < series.ranks(); ++r) {
    for (size_t s = 0; s < series.steps(); ++s) after[r][s] = series.local_ns[r][s] - after[r][s];
  }
  return after;
}

// Whether another of `findings` about the same ranks names a call path that holds `f`'s (its time
// is inside that one's: "a|b" holds "a|b|c"); fixing that one fixes `f` too.
bool HeldByAnother(const Finding& f, const std::vector<Finding>& findings) {
  if (f.subject_kind != "python_path") return false;
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& outer) {
    return &outer != &f && outer.subject_kind == "python_path" && outer.ranks == f.ranks &&
           CallPathHolds(outer.subject, f.subject);
  });
}

// A function finding costed step by step: its saving, severity and `per_step` what-if evidence.
// Below `min_excess_ns` a costed finding is information, as a slow rank is (CostSlowGroupsByStep).
void SetPerStepCost(const WhatIf& w, size_t steps, double min_excess_ns, Finding* f) {
  f->cost.saving_ns = w.saving_ns;
  f->cost.step_ns = w.step_ns;
  f->cost.estimated_step_ns = w.estimated_step_ns;
  f->severity = w.saving_ns <= 0 || w.saving_ns < min_excess_ns                  ? Severity::kInfo
                : w.step_ns > 0 && w.saving_ns >= kCriticalStepShare * w.step_ns ? Severity::kCritical
                                                                                  : Severity::kWarning;
  Evidence e;
  e.kind = EvidenceKind::kWhatIf;
  e.detail = "per_step";
  e.Set("step_ns", w.step_ns).Set("estimated_step_ns", w.estimated_step_ns).Set("saving_ns", w.saving_ns)
      .Set("steps", static_cast<double>(steps));
  f->evidence.push_back(std::move(e));
}

}  // namespace

CombinedWhatIf WhatIfAllFindings(const StepSeries& series, const std::vector<int64_t>& rank_numbers, double step_ns,
                                 const std::vector<Finding>& findings) {
  CombinedWhatIf out;
  if (series.steps() == 0 || series.ranks() < 2 || series.ranks() != rank_numbers.size()) return out;
  StepTable reduction(series.ranks(), std::vector<double>(series.steps(), 0));
  std::vector<bool> named(series.ranks(), false);
  for (const Finding& f : findings) {
    const StepTable r = ReductionsOf(series, rank_numbers, f);
    if (r.empty()) continue;
    ++out.findings;
    for (int64_t rank : f.ranks) named[static_cast<size_t>(RankIndex(rank_numbers, rank))] = true;
    if (HeldByAnother(f, findings)) continue;  // its time is in the other's reduction already
    for (size_t i = 0; i < series.ranks(); ++i) {
      for (size_t s = 0; s < series.steps(); ++s) reduction[i][s] += r[i][s];
    }
  }
  if (out.findings == 0) return out;
  const bool all_named = std::all_of(named.begin(), named.end(), [](bool b) { return b; });
  StepTable after = series.local_ns;
  for (size_t s = 0; s < series.steps(); ++s) {
    // No fixed rank becomes faster than the ranks no finding names (all ranks when none is left).
    const double floor = PeersOf(StepColumn(series.local_ns, s),
                                 all_named ? std::vector<bool>(series.ranks(), false) : named).median;
    for (size_t i = 0; i < series.ranks(); ++i) {
      if (reduction[i][s] <= 0) continue;
      const double local = after[i][s];
      after[i][s] = std::max(std::min(local, floor), local - reduction[i][s]);
    }
  }
  out.what_if = WhatIfByStep(series, after, step_ns);
  for (size_t i = 0; i < series.ranks(); ++i) {
    if (named[i]) out.ranks.push_back(rank_numbers[i]);
  }
  std::sort(out.ranks.begin(), out.ranks.end());
  return out;
}

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
    SetPerStepCost(w, series.steps(), min_excess_ns, &f);
  }
}

double FunctionExcessOn(const Finding& f, int64_t rank) {
  double excess = -1;
  for (const Evidence& e : f.evidence) {
    if (e.kind == EvidenceKind::kFunction && e.subject == f.subject && e.rank == rank) excess = e.Get("excess_ns");
  }
  return excess;
}

void CostSlowFunctionsByStep(const StepSeries& series, const std::vector<int64_t>& rank_numbers, double step_ns,
                             double min_excess_ns, std::vector<Finding>* findings) {
  if (series.steps() == 0 || series.ranks() < 2 || series.ranks() != rank_numbers.size()) return;
  for (Finding& f : *findings) {
    if (f.kind != FindingKind::kSlowFunction || f.cost.method != CostMethod::kWhatIfFaster || f.ranks.size() != 1) {
      continue;
    }
    const int rank = RankIndex(rank_numbers, f.ranks.front());
    if (rank < 0 || f.cost.added_ns <= 0) continue;
    SetPerStepCost(WhatIfByStep(series, ReductionOf(series, f, static_cast<uint32_t>(rank)), step_ns), series.steps(),
                   min_excess_ns, &f);
  }
}

}  // namespace rankscope
