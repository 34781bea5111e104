// Parallelism-aware findings (issue 16): a rank is compared with the ranks that do the same work
// (its pipeline stage), and stages with each other. Three problems that look alike job-wide are
// told apart here:
//  - slow_stage: a stage's local time per step (median over its ranks) exceeds the other
//    stages' median by the outlier margin: a partition imbalance. Every other stage waits for it
//    once per micro-batch; the bubble it causes is their extra communication wait.
//  - slow_worker: a rank's local time exceeds the median of its own stage's other ranks by the
//    margin (and by k·MAD when the stage has three or more others): its pipeline column and
//    its data-parallel peers wait for it.
//  - per_step_imbalance: among a stage's data-parallel ranks, the slowest rank of a step changes
//    from step to step and exceeds the step's median by the margin in most steps, while the
//    ranks' medians over steps are within the margin of each other: input / sequence-length
//    imbalance, invisible to per-rank medians. Steps whose slowest rank is a known straggler
//    (ParallelInputs::stragglers) are left out of it.
// Local time = step duration - exposed communication (rank_metrics.h), so a last stage's wait
// for its predecessors never counts as its own work.
//
// Costs (CostMethod::kWhatIfLikeMedian): the step time saved if the slow stage / worker ran like
// its peers' median, scaled by the pipeline's (m + p - 1) / m: with m micro-batches over p
// stages a GPipe-like step is m + p - 1 slots of the slowest stage's per-micro-batch time.
// Per-step imbalance saves the mean over steps of (slowest - median) local time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rankscope/cluster/layout.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// In most steps = at least this share of the steps compared.
inline constexpr double kMostStepsShare = 0.5;
// A stage of at most this many ranks compares per-step draws, not medians (PerStepImbalances).
inline constexpr size_t kFewRanks = 3;

struct StageStats {
  int64_t stage = 0;
  std::vector<int64_t> ranks;  // rank numbers
  double local_ns = 0;         // median over its ranks of their local time per step
  double comm_wait_ns = 0;     // ... of their communication wait
};

struct ParallelAnalysis {
  std::vector<StageStats> stages;  // by stage (one entry without a pipeline)
  double microbatches = 0;         // estimated from the first stage's point-to-point transfers (0: unknown)
  std::vector<Finding> findings;
  // Per stage with a per_step_imbalance finding: the step numbers it was judged on (the steps
  // whose slowest rank no costed finding names); uneven_timing.h compares the ranks' work there.
  std::map<int64_t, std::vector<int64_t>> imbalance_steps;
};

struct ParallelInputs {
  const std::vector<RankSummary>* ranks = nullptr;
  const std::vector<RankMetrics>* metrics = nullptr;
  const JobLayout* layout = nullptr;
  OutlierRule rule;
  std::string unit = "step";
  double min_excess_ns = 0;
  // Ranks the job-wide findings already name with a cost (a slow rank or node, a function or extra
  // work of theirs): a step whose slowest rank is one of them is that rank's, not the input's, and
  // the per-step imbalance is judged on the other steps (a straggler on a shared GPU is the
  // slowest in most steps, and noise names another rank in the rest).
  std::vector<int64_t> stragglers;
};

ParallelAnalysis FindParallelProblems(const ParallelInputs& in);

// Adds the parallel findings to the job-wide ones (findings.h) and, in a pipelined job, drops
// what compared ranks across stages: slow_rank (slow_worker compares within the stage), and
// slow_function / extra_work confined to a slow stage's ranks (the slow stage explains them).
// Without a pipeline slow_rank already compares a rank with its peers: slow_worker is dropped.
void MergeParallelFindings(const JobLayout& layout, const ParallelAnalysis& parallel, std::vector<Finding>* findings);

}  // namespace rankscope
