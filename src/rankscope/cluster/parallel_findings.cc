#include "rankscope/cluster/parallel_findings.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "rankscope/cluster/communication_work.h"
#include "rankscope/cluster/consistent_excess.h"
#include "rankscope/cluster/what_if.h"

namespace rankscope {
namespace {

double Median(std::vector<double> v) { return ComputeRobustStats(std::move(v)).median; }

// Micro-batches per step: a first-stage rank sends one activation and receives one gradient per
// micro-batch, so its point-to-point transfers per step / 2.
double EstimateMicrobatches(const std::vector<RankSummary>& ranks, const std::vector<uint32_t>& first_stage) {
  std::vector<double> per_rank;
  for (uint32_t r : first_stage) {
    const RankSummary& s = ranks[r];
    if (s.steps.empty()) continue;
    std::set<int64_t> steps;
    for (const StepSummary& st : s.steps) steps.insert(st.number);
    double p2p = 0;
    for (const CollectiveInstance& c : s.collectives) {
      if (steps.count(c.step) && c.type < s.collective_types.size() && IsPointToPointOp(s.collective_types[c.type].op)) {
        ++p2p;
      }
    }
    if (p2p > 0) per_rank.push_back(p2p / 2 / static_cast<double>(s.steps.size()));
  }
  return per_rank.empty() ? 0 : std::max(1.0, Median(per_rank));
}

// How much one unit of a stage's extra local time lengthens the step: (m + p - 1) / m.
double PipelineFactor(double microbatches, int64_t stages) {
  if (stages <= 1 || microbatches <= 0) return 1.0;
  return (microbatches + static_cast<double>(stages) - 1) / microbatches;
}

// Time per step the rank's thread spends inside c10d's communication ops (c10d::recv_, send,
// allreduce_, ...). On CPU backends the wait for a peer is often inside the c10d op while gloo's
// own span (the collective instance) is short, so the exposed communication misses it and it
// would count as local work: in a pipeline that is the wait for the neighbouring stage.
double CommOpsPerStep(const RankSummary& r) {
  double ns = 0;
  for (const FunctionStat& f : r.cpu_ops.rows) {
    if ((f.name.starts_with("c10d::") || f.name == "record_param_comms") &&
        IsCommunicationWork(FunctionKind::kCpuOp, f.name)) {
      ns += static_cast<double>(f.in_window_ns);
    }
  }
  return r.steps.empty() ? ns : ns / static_cast<double>(r.steps.size());
}

class ParallelRules {
 public:
  explicit ParallelRules(const ParallelInputs& in) : in_(in), by_stage_(RanksByStage(*in.layout)) {
    // Local time and wait with the waits inside c10d ops moved from the first to the second.
    for (size_t r = 0; r < in.metrics->size(); ++r) {
      RankMetrics m = (*in.metrics)[r];
      const double hidden = std::max(0.0, CommOpsPerStep((*in.ranks)[r]) - m.comm_wait_ns);
      const double moved = std::min(hidden, m.local_ns);
      m.local_ns -= moved;
      m.comm_wait_ns += moved;
      metrics_.push_back(m);
      moved_.push_back(moved);
    }
  }

  ParallelAnalysis Run() {
    ParallelAnalysis a;
    a.microbatches = in_.layout->has_pipeline() ? EstimateMicrobatches(*in_.ranks, by_stage_.front()) : 0;
    factor_ = PipelineFactor(a.microbatches, in_.layout->stages);
    step_ns_ = JobStepNs(*in_.metrics);
    for (size_t s = 0; s < by_stage_.size(); ++s) a.stages.push_back(Stats(static_cast<int64_t>(s)));
    std::set<int64_t> slow_stages;
    if (a.stages.size() > 1) {
      for (const StageStats& st : a.stages) {
        if (auto f = SlowStage(a, st)) {
          slow_stages.insert(st.stage);
          a.findings.push_back(std::move(*f));
        }
      }
    }
    for (size_t s = 0; s < by_stage_.size(); ++s) {
      for (Finding& f : SlowWorkers(static_cast<int64_t>(s))) a.findings.push_back(std::move(f));
    }
    for (Finding& f : PerStepImbalances(&a.imbalance_steps)) a.findings.push_back(std::move(f));
    (void)slow_stages;
    return a;
  }

 private:
  const RankMetrics& M(uint32_t r) const { return metrics_[r]; }
  int64_t Number(uint32_t r) const { return (*in_.ranks)[r].rank.rank; }

  StageStats Stats(int64_t s) const {
    StageStats st;
    st.stage = s;
    std::vector<double> local, wait;
    for (uint32_t r : by_stage_[static_cast<size_t>(s)]) {
      st.ranks.push_back(Number(r));
      local.push_back(M(r).local_ns);
      wait.push_back(M(r).comm_wait_ns);
    }
    st.local_ns = Median(local);
    st.comm_wait_ns = Median(wait);
    return st;
  }

  Cost CostOf(double saving) const {
    Cost c;
    c.method = CostMethod::kWhatIfLikeMedian;
    c.unit = in_.unit;
    c.step_ns = step_ns_;
    c.saving_ns = std::clamp(saving, 0.0, step_ns_);
    c.estimated_step_ns = step_ns_ - c.saving_ns;
    return c;
  }

  Severity SeverityOf(const Cost& c) const {
    return c.step_ns > 0 && c.saving_ns >= 0.10 * c.step_ns ? Severity::kCritical : Severity::kWarning;
  }

  Evidence WhatIf(const Cost& c) const {
    Evidence e;
    e.kind = EvidenceKind::kWhatIf;
    e.detail = "like_median";
    e.Set("step_ns", c.step_ns).Set("estimated_step_ns", c.estimated_step_ns).Set("saving_ns", c.saving_ns);
    e.Set("pipeline_factor", factor_);
    return e;
  }

  std::optional<Finding> SlowStage(const ParallelAnalysis& a, const StageStats& st) const {
    std::vector<double> others, other_wait;
    for (const StageStats& o : a.stages) {
      if (o.stage == st.stage) continue;
      others.push_back(o.local_ns);
      other_wait.push_back(o.comm_wait_ns);
    }
    const double median = Median(others);
    const double excess = st.local_ns - median;
    if (excess <= in_.rule.margin * median || excess < in_.min_excess_ns) return std::nullopt;
    Finding f;
    f.kind = FindingKind::kSlowStage;
    f.ranks = st.ranks;
    f.subject = std::to_string(st.stage);
    f.subject_kind = "stage";
    f.cost = CostOf(excess * factor_);
    f.severity = SeverityOf(f.cost);
    for (const StageStats& o : a.stages) {
      Evidence e;
      e.kind = EvidenceKind::kStage;
      e.subject = std::to_string(o.stage);
      e.ranks = o.ranks;
      e.detail = o.stage == st.stage ? "slow" : "peer";
      e.Set("local_ns", o.local_ns).Set("comm_wait_ns", o.comm_wait_ns);
      e.Set("other_stages_local_ns", median).Set("stages", static_cast<double>(a.stages.size()));
      e.Set("microbatches", a.microbatches);
      // The bubble: what the other stages wait beyond the slow stage's own wait.
      if (o.stage != st.stage) e.Set("bubble_ns", std::max(0.0, o.comm_wait_ns - st.comm_wait_ns));
      f.evidence.push_back(std::move(e));
    }
    f.evidence.push_back(WhatIf(f.cost));
    f.next = {NextStepKind::kPartitionStages, f.subject, ""};
    return f;
  }

  std::vector<Finding> SlowWorkers(int64_t s) const {
    const std::vector<uint32_t>& members = by_stage_[static_cast<size_t>(s)];
    std::vector<Finding> out;
    if (members.size() < 2) return out;
    std::vector<double> locals;
    for (uint32_t r : members) locals.push_back(M(r).local_ns);
    LeaveOneOutStats peer_stats(std::move(locals));  // each rank against the stage's other ranks
    const StepTable table = Table(members);
    for (size_t i = 0; i < members.size(); ++i) {
      const uint32_t r = members[i];
      const RobustStats stats = peer_stats.Without(M(r).local_ns);
      const size_t peers = members.size() - 1;
      const double excess = M(r).local_ns - stats.median;
      const bool robust = peers < 3 || in_.rule.IsHigh(M(r).local_ns, stats);
      if (!robust || excess <= in_.rule.margin * stats.median || excess < in_.min_excess_ns) continue;
      // A slow worker is slower than its peers step after step, by about the same each time; one
      // that is faster in two or more steps, or whose excess is small against its step-to-step
      // variation, owes its median to the steps' draws (a per-step imbalance, PerStepImbalances).
      const StepExcess step_excess = ExcessOverPeers(table, i);
      const size_t steps = table.steps.size();
      if (steps >= 3 && !step_excess.SlowWorker()) continue;
      const size_t slower = step_excess.slower;
      Finding f;
      f.kind = FindingKind::kSlowWorker;
      f.ranks = {Number(r)};
      f.subject = std::to_string(s);
      f.subject_kind = "stage";
      f.cost = CostOf(excess * factor_);
      f.severity = SeverityOf(f.cost);
      Evidence e;
      e.kind = EvidenceKind::kLocalTime;
      e.rank = Number(r);
      e.Set("local_ns", M(r).local_ns).Set("median_local_ns", stats.median);
      e.Set("ranks_compared", static_cast<double>(peers)).Set("threshold_ns", in_.rule.margin * stats.median);
      e.Set("comm_wait_ns", M(r).comm_wait_ns).Set("compute_ns", M(r).compute_ns);
      std::vector<double> wait, compute;
      for (uint32_t o : members) {
        if (o == r) continue;
        wait.push_back(M(o).comm_wait_ns);
        compute.push_back(M(o).compute_ns);
      }
      e.Set("median_comm_wait_ns", Median(wait)).Set("median_compute_ns", Median(compute));
      if (steps > 0) e.Set("slower_steps", static_cast<double>(slower)).Set("steps", static_cast<double>(steps));
      if (steps >= 3) e.Set("step_excess_t", step_excess.test.t).Set("t_critical", step_excess.test.t_critical);
      f.evidence.push_back(std::move(e));
      f.evidence.push_back(WhatIf(f.cost));
      f.next = {NextStepKind::kCompareFunction, "", ""};
      out.push_back(std::move(f));
    }
    return out;
  }

  // Per stage: its ranks' local time in every step they all traced.
  struct StepTable {
    std::vector<uint32_t> ranks;
    std::vector<int64_t> steps;
    std::vector<std::vector<double>> local;  // [step][rank position]
  };
  StepTable Table(const std::vector<uint32_t>& members) const {
    StepTable t;
    t.ranks = members;
    std::map<int64_t, std::vector<double>> by_step;
    for (size_t i = 0; i < members.size(); ++i) {
      for (const StepSummary& st : (*in_.ranks)[members[i]].steps) {
        std::vector<double>& row = by_step[st.number];
        row.resize(members.size(), -1);
        row[i] = std::max(0.0, static_cast<double>(st.duration_ns() - st.comm_exposed_ns) - moved_[members[i]]);
      }
    }
    for (auto& [step, row] : by_step) {
      if (row.size() != members.size() || std::any_of(row.begin(), row.end(), [](double v) { return v < 0; })) continue;
      t.steps.push_back(step);
      t.local.push_back(row);
    }
    return t;
  }

  // The rank at `position` of the table against the median of the stage's other ranks, per step.
  struct StepExcess {
    size_t slower = 0;  // steps in which it had more local time
    size_t steps = 0;
    ConsistentExcess test;
    // Slower in every step but at most one, by an excess its step-to-step variation does not explain.
    bool SlowWorker() const { return slower + 1 >= steps && test.consistent; }
  };
  static StepExcess ExcessOverPeers(const StepTable& t, size_t position) {
    StepExcess out;
    std::vector<double> excess;
    for (const std::vector<double>& row : t.local) {
      std::vector<double> others;
      for (size_t j = 0; j < row.size(); ++j) {
        if (j != position) others.push_back(row[j]);
      }
      if (others.empty()) continue;
      excess.push_back(row[position] - Median(others));
      if (excess.back() > 0) ++out.slower;
    }
    out.steps = excess.size();
    out.test = TestConsistentExcess(excess);
    return out;
  }

  // The CPU phases of a stage's ranks, by step number.
  class PhaseSteps {
   public:
    PhaseSteps(const std::vector<RankSummary>& ranks, const std::vector<uint32_t>& members) {
      for (uint32_t r : members) {
        std::map<int64_t, const StepSummary*>& of = by_step_.emplace_back();
        for (const StepSummary& st : ranks[r].steps) of[st.number] = &st;
      }
    }
    // Adds, per phase, the positive part of the time the rank at `worst` spent there in step
    // `number` over the median of the other ranks'. A phase holds a rank's waits too (the wait for
    // the last all-reduce ends the backward): while the slowest rank ran longer in one phase its
    // peers waited in another, where the slowest rank is behind; only its excesses count.
    void AddExcess(int64_t number, size_t worst, std::array<double, kNumStepPhases>* excess) const {
      std::vector<const StepSummary*> steps;
      for (const auto& of : by_step_) {
        const auto it = of.find(number);
        if (it == of.end()) return;
        steps.push_back(it->second);
      }
      for (int p = 0; p < kNumStepPhases; ++p) {
        std::vector<double> others;
        for (size_t i = 0; i < steps.size(); ++i) {
          if (i != worst) others.push_back(static_cast<double>(steps[i]->cpu_phase_ns[p]));
        }
        if (others.empty()) return;
        (*excess)[p] += std::max(0.0, static_cast<double>(steps[worst]->cpu_phase_ns[p]) - Median(others));
      }
    }

   private:
    std::vector<std::map<int64_t, const StepSummary*>> by_step_;  // per member
  };

  // Sets "excess_<phase>_ns" (the mean over `steps` of each CPU phase's excess of the step's
  // slowest rank) and returns the phase that holds at least half of their sum, or "".
  static std::string SetPhaseExcess(const std::array<double, kNumStepPhases>& sum, double steps, Evidence* e) {
    double total = 0;
    int top = 0;
    for (int p = 0; p < kNumStepPhases; ++p) {
      const double mean = steps > 0 ? sum[p] / steps : 0;
      e->Set("excess_" + std::string(StepPhaseName(static_cast<StepPhase>(p))) + "_ns", mean);
      total += sum[p];
      if (sum[p] > sum[top]) top = p;
    }
    return total > 0 && sum[top] >= 0.5 * total ? std::string(StepPhaseName(static_cast<StepPhase>(top))) : "";
  }

  // One finding per stage whose data-parallel ranks are imbalanced step to step (a pipeline column
  // carries the same micro-batches through every stage, so an input imbalance shows in each).
  std::vector<Finding> PerStepImbalances(std::map<int64_t, std::vector<int64_t>>* judged_steps) const {
    std::vector<Finding> out;
    const std::set<int64_t> stragglers(in_.stragglers.begin(), in_.stragglers.end());
    for (size_t s = 0; s < by_stage_.size(); ++s) {
      const std::vector<uint32_t>& members = by_stage_[s];
      if (members.size() < 2) continue;
      const StepTable t = Table(members);
      std::vector<double> rank_medians;
      for (uint32_t r : members) rank_medians.push_back(M(r).local_ns);
      const double median_of_ranks = Median(rank_medians);
      const double max_rank = *std::max_element(rank_medians.begin(), rank_medians.end());
      std::set<uint32_t> slowest;
      size_t imbalanced = 0;
      double excess_sum = 0, ratio_min = 1e300, ratio_max = 0;
      Evidence e;
      e.kind = EvidenceKind::kStepImbalance;
      e.subject = std::to_string(s);
      size_t compared = 0;
      std::vector<int64_t> judged;
      const PhaseSteps phases(*in_.ranks, members);
      std::array<double, kNumStepPhases> phase_excess{};
      for (size_t k = 0; k < t.steps.size(); ++k) {
        const std::vector<double>& row = t.local[k];
        const size_t worst = static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
        if (stragglers.count(Number(members[worst]))) continue;  // the straggler's step, not the input's
        ++compared;
        judged.push_back(t.steps[k]);
        phases.AddExcess(t.steps[k], worst, &phase_excess);
        const double med = Median(row);
        const double ratio = med > 0 ? row[worst] / med : 0;
        excess_sum += row[worst] - med;
        if (ratio > 1 + in_.rule.margin) {
          ++imbalanced;
          slowest.insert(members[worst]);
          ratio_min = std::min(ratio_min, ratio);
          ratio_max = std::max(ratio_max, ratio);
        }
        e.ranks.push_back(Number(members[worst]));  // the slowest rank of each step, in step order
      }
      if (compared < 3) continue;
      const double steps = static_cast<double>(compared);
      const double mean_excess = excess_sum / steps;
      const bool most = static_cast<double>(imbalanced) >= kMostStepsShare * steps;
      // Not a slow worker: the ranks' medians are close, or, in a stage of two or three ranks
      // (where the medians of a few steps' random draws differ by chance), the rank with the
      // largest median is not slower than its peers step after step.
      const size_t top = static_cast<size_t>(std::max_element(rank_medians.begin(), rank_medians.end()) -
                                             rank_medians.begin());
      const bool few_ranks = members.size() <= kFewRanks;
      const bool medians_close = max_rank <= (1 + in_.rule.margin) * median_of_ranks ||
                                 (few_ranks && !ExcessOverPeers(t, top).SlowWorker());
      if (!most || slowest.size() < 2 || !medians_close || mean_excess < in_.min_excess_ns) continue;
      e.Set("steps", steps).Set("imbalanced_steps", static_cast<double>(imbalanced));
      e.Set("distinct_slowest", static_cast<double>(slowest.size()));
      e.Set("min_ratio", ratio_min).Set("max_ratio", ratio_max).Set("mean_excess_ns", mean_excess);
      e.Set("rank_median_spread_share", median_of_ranks > 0 ? max_rank / median_of_ranks - 1 : 0);
      e.detail = SetPhaseExcess(phase_excess, steps, &e);
      Finding f;
      f.kind = FindingKind::kPerStepImbalance;
      for (uint32_t r : members) f.ranks.push_back(Number(r));
      std::sort(f.ranks.begin(), f.ranks.end());
      f.subject = std::to_string(s);
      f.subject_kind = "stage";
      f.cost = CostOf(mean_excess * factor_);
      f.severity = SeverityOf(f.cost);
      f.evidence.push_back(std::move(e));
      f.evidence.push_back(WhatIf(f.cost));
      f.next = {NextStepKind::kInputPipeline, "", ""};
      out.push_back(std::move(f));
      (*judged_steps)[static_cast<int64_t>(s)] = std::move(judged);
    }
    return out;
  }

  const ParallelInputs& in_;
  std::vector<RankMetrics> metrics_;  // per rank index, waits inside c10d ops counted as waits
  std::vector<double> moved_;         // per rank index: the wait moved out of its local time per step
  std::vector<std::vector<uint32_t>> by_stage_;
  double factor_ = 1.0;
  double step_ns_ = 0;
};

}  // namespace

ParallelAnalysis FindParallelProblems(const ParallelInputs& in) { return ParallelRules(in).Run(); }

void MergeParallelFindings(const JobLayout& layout, const ParallelAnalysis& parallel, std::vector<Finding>* findings) {
  const bool pipeline = layout.has_pipeline();
  std::vector<std::set<int64_t>> slow_stages;
  for (const Finding& f : parallel.findings) {
    if (f.kind == FindingKind::kSlowStage) slow_stages.emplace_back(f.ranks.begin(), f.ranks.end());
  }
  auto within_slow_stage = [&](const Finding& f) {
    return std::any_of(slow_stages.begin(), slow_stages.end(), [&](const std::set<int64_t>& s) {
      return std::all_of(f.ranks.begin(), f.ranks.end(), [&](int64_t r) { return s.count(r) > 0; });
    });
  };
  std::erase_if(*findings, [&](const Finding& f) {
    if (!pipeline) return false;
    if (f.kind == FindingKind::kSlowRank) return true;
    return (f.kind == FindingKind::kSlowFunction || f.kind == FindingKind::kExtraWork) && within_slow_stage(f);
  });
  for (const Finding& f : parallel.findings) {
    if (!pipeline && f.kind == FindingKind::kSlowWorker) continue;
    findings->push_back(f);
  }
  RankFindings(findings);
}

}  // namespace rankscope
