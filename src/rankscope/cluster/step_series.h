// Per-step numbers of every rank, aligned by step number: what the per-step significance test
// (significance.h), the per-step cost model (cost_model.h) and the slow-host test
// (host_outliers.h) compare. The per-rank metrics (rank_metrics.h) keep one median per rank;
// these keep every step, so a rank's excess can be checked step by step against its peers in
// the same step (the same load, the same collectives), and a what-if can recompute each step's
// time through its synchronisation point.
//
// Memory: (ranks × (1 + 2 × kNumStepPhases) + 1) × common steps doubles (8 profiled steps of 8
// ranks: under 6 KB).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

using PhaseValues = std::array<double, kNumStepPhases>;

struct StepSeries {
  std::vector<int64_t> numbers;                    // the step numbers every rank has, ascending
  std::vector<std::vector<double>> local_ns;       // [rank][step]: duration - exposed communication
  std::vector<std::vector<PhaseValues>> cpu_phase_ns;  // [rank][step]
  std::vector<std::vector<PhaseValues>> gpu_phase_ns;  // [rank][step]
  std::vector<double> step_ns;                     // [step]: the median over ranks of its duration
  size_t steps() const { return numbers.size(); }
  size_t ranks() const { return local_ns.size(); }
};

// Empty (no steps) when some rank has no profiled steps or the ranks share none.
StepSeries AlignSteps(const std::vector<RankSummary>& ranks);

// The mean of the steps' durations: what a per-step what-if's saving (a mean over the steps) is a
// share of. With a stall every third step it is well above the median step (rank_metrics.h), and
// "the step from its median to its median minus the mean saving" would understate the step left.
// 0 without steps.
double MeanStepNs(const StepSeries& series);

// The median and interquartile range of the values of the ranks not `excluded` in one step.
struct PeerBand {
  double median = 0;
  double iqr = 0;
  size_t count = 0;
};
PeerBand PeersOf(const std::vector<double>& values, const std::vector<bool>& excluded);

// One column of a [rank][step] table: every rank's value in step `s`.
std::vector<double> StepColumn(const std::vector<std::vector<double>>& v, size_t s);

}  // namespace rankscope
