// The per-step what-if: what a finding costs the job's step time, recomputed step by step
// through the step's synchronisation point.
//
// In synchronous training a step ends when the last rank arrives at the step's collectives, so
// a step's time is (up to the communication every rank pays) the largest local time of any rank
// in that step (step_series.h: duration - exposed communication). The what-if replaces, in every
// step, the faulty rank's time in the finding's phase or function by its peers' and takes the
// largest local time again; the saving is the mean over steps of the difference. A rank that
// sets the pace in some steps and not in others is costed for the steps where it does: on a
// loaded machine that is what a measurement of the fixed job sees. The cross-rank medians of
// what_if.h cannot see that (the slowest rank's median local time is seldom anyone's step).
//
// Extra work (findings.h) — an anomaly that the median-based what-if gave no cost — gets this
// per-step cost when its peers measurably wait for it (a saving of at least the minimum excess),
// and then ranks with the costed findings. Memory: one [rank][step] table per finding costed.
#pragma once

#include <vector>

#include "rankscope/cluster/arrival.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/step_series.h"
#include "rankscope/cluster/what_if.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

using StepTable = std::vector<std::vector<double>>;  // [rank][step]

// The job's saving if every rank's local times were `after` instead of `series.local_ns`.
WhatIf WhatIfByStep(const StepSeries& series, const StepTable& after, double step_ns);

// Local times with the `group`'s ranks no slower than their peers' median, step by step.
StepTable LikePeers(const StepSeries& series, const std::vector<bool>& group);
// Local times with `rank` doing `excess_ns` less work per step (never below its peers' median).
StepTable WithoutExcess(const StepSeries& series, uint32_t rank, double excess_ns);
// Local times with each rank r of `group` doing `excess_ns[r]` less work per step (never below the
// median of the ranks outside the group in that step).
StepTable WithoutGroupExcess(const StepSeries& series, const std::vector<bool>& group,
                             const std::vector<double>& excess_ns);
// Local times with `rank` doing `excess_ns` less work per step on average, all of it in `calls`
// steps (a function called in fewer steps than there are: a checkpoint, a periodic evaluation, a
// stall every N steps): the steps where the rank's local time exceeds its peers' median the most,
// each losing excess_ns × steps / calls (never below its peers' median). The rank summary keeps no
// per-step time per function, but a call must lie in some step, and a long one in a step that is
// long on that rank; spreading it over every step instead would cost a 60 ms stall every fourth
// step as 15 ms less in each step, which rarely changes whose step is the longest.
StepTable WithoutIntermittentExcess(const StepSeries& series, uint32_t rank, double excess_ns, size_t calls);
// Local times with `rank`'s phase (a [rank][step] table) cut to its peers' median in each step.
StepTable WithoutPhaseExcess(const StepSeries& series, uint32_t rank, const StepTable& phase);

// Costs the slow_rank and slow_node findings step by step: each step without the group's excess
// over its peers' median in that step, as long as its slowest rank. The cross-rank medians
// (what_if.h) leave out that the other ranks' slowest is a different rank in each step, above
// their median: they overstate what fixing a straggler saves when its excess is within a few times
// the ranks' step-to-step spread (measured in docs/cluster.md, "Accuracy"). `rank_numbers`: per
// rank index, its rank. Below `min_excess_ns` a finding stays, as information: the rule found it,
// but nobody measurably waits for it. Findings are left unranked; without steps nothing changes.
void CostSlowGroupsByStep(const StepSeries& series, const std::vector<int64_t>& rank_numbers, double step_ns,
                          double min_excess_ns, std::vector<Finding>* findings);
// The saving per step if the ranks `group` behaved like their peers, step by step (every slow
// rank and node of the job at once: the diagnosis's total).
WhatIf WhatIfGroupLikePeers(const StepSeries& series, const std::vector<bool>& group, double step_ns);

// Every finding about ranks fixed at once. Each finding is costed alone, with the other faults
// still there: with two stragglers, fixing either leaves the other setting the pace, and each
// finding shows a small saving (or none: "no peer measurably waits for it") while fixing both
// saves the most. Step by step, every costed slow_rank and slow_node finding's ranks get their
// peers' median, every slow_function and extra_work finding's ranks (costed or with work added)
// lose the excess the finding names (in the steps it names, as its own cost does; a call path
// inside another finding's path on the same ranks adds nothing: its time is in that one's); a
// rank no faster than the median of the ranks no finding names. Pipelined jobs (replayed costs) and
// findings about no rank are left out; `findings` < 2 says nothing to add.
struct CombinedWhatIf {
  WhatIf what_if;
  size_t findings = 0;         // findings fixed together
  std::vector<int64_t> ranks;  // their ranks, ascending
};
CombinedWhatIf WhatIfAllFindings(const StepSeries& series, const std::vector<int64_t>& rank_numbers, double step_ns,
                                 const std::vector<Finding>& findings);

// Costs the uncosted extra_work findings whose per-step saving is at least `min_excess_ns`,
// except on a rank that matched collectives show on time at every one (nobody waits for it).
// `rank_numbers`: per rank index, its rank. Findings are left unranked.
void CostExtraWork(const StepSeries& series, const ArrivalAnalysis& arrival, const std::vector<int64_t>& rank_numbers,
                   double step_ns,
                   double min_excess_ns, std::vector<Finding>* findings);

// Costs the slow_function findings about one rank step by step, as CostSlowGroupsByStep costs
// the slow ranks: the rank loses the function's excess (ReductionOf: in the steps it is called in
// when that is fewer than all, else in every step) and each step is as long as its slowest rank.
// The median what-if (what_if.h, kept as evidence) takes the excess off the rank's median step as
// if the job waited for that rank in every step. A function called in a few steps seldom touches
// that median (a 40 ms sleep every fourth step: 4.2 ms/step that way, about 8 measured); a small
// excess in every step is paid only in the steps where the rank is the last to arrive (a 5 % fault
// on 6 ranks: 3.7-4.5 ms/step that way, 1.4-3.2 measured). Below `min_excess_ns` the finding
// stays, as information. Findings are left unranked.
void CostSlowFunctionsByStep(const StepSeries& series, const std::vector<int64_t>& rank_numbers, double step_ns,
                             double min_excess_ns, std::vector<Finding>* findings);

// A function finding's excess per unit on `rank`: its subject's `function` evidence there, or -1
// when it has none.
double FunctionExcessOn(const Finding& f, int64_t rank);

}  // namespace rankscope
