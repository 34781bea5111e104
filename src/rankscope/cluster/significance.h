// The per-step significance test: is a rank's excess (in local time, or in a phase) a property
// of the rank, or of a few noisy steps?
//
// The cross-rank rule (robust_rule.h) compares one median per rank. On a loaded machine a
// healthy rank can sit above its peers' spread in that median because two or three of its
// steps were long (descheduled, an emulated-device sleep that overslept) — a false finding on a
// clean run. A fault does not come and go: the injected work is there in every step. So the
// excess counts only when, in more than half of the steps, the rank's value exceeds its peers'
// median *in that same step* by more than the peers' spread in that step (their interquartile
// range): a step where every rank is slowed by the load moves the median and the band with it.
// A group of ranks (the ranks of one host, host_outliers.h) is tested by its smallest value.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/cluster/phase_outliers.h"
#include "rankscope/cluster/slow_ranks.h"
#include "rankscope/cluster/step_series.h"

namespace rankscope {

// The share of steps in which the excess must stand out (strictly more than this).
inline constexpr double kSignificantStepShare = 0.5;

struct StepSignificance {
  size_t steps = 0;             // steps compared
  size_t exceeding = 0;         // steps in which the group stood out
  double median_excess_ns = 0;  // median over steps of (group's smallest value - peers' median)
  bool significant = false;
};

// `values`: [rank][step]; `group`: per rank, whether it is in the tested group (the rest are the
// peers). Without steps or without peers: not significant.
StepSignificance TestStepExcess(const std::vector<std::vector<double>>& values, const std::vector<bool>& group);

// Drops, from the slow-rank analysis and the phase outliers, the ranks whose excess is not
// significant step by step, and regroups the slow ranks by host. No-op without aligned steps.
// TestStepExcess of many groups over one table (every host of a job of 10,000 ranks): each step's
// values are sorted once, and a group's peers are that column without the group's values (the
// same order statistics, so exactly TestStepExcess's and PeersOf's numbers).
class StepExcessTester {
 public:
  explicit StepExcessTester(const std::vector<std::vector<double>>& values);
  // TestStepExcess(values, group) where group is true for exactly `members` (ascending, distinct).
  StepSignificance Test(const std::vector<uint32_t>& members) const;
  // PeersOf(StepColumn(values, step), group), group as above.
  PeerBand Peers(size_t step, const std::vector<uint32_t>& members) const;

 private:
  const std::vector<std::vector<double>>& values_;
  std::vector<std::vector<double>> sorted_;  // [step]: StepColumn, sorted
};

void ApplyStepSignificance(const StepSeries& series, const std::vector<RankHost>& hosts, SlowRankAnalysis* slow,
                           std::vector<PhaseOutlier>* phases);

// One phase side of a series as a [rank][step] table.
std::vector<std::vector<double>> PhaseTable(const StepSeries& series, StepPhase phase, bool gpu);

}  // namespace rankscope
