// Cluster findings: the rules that turn the cluster diagnosis's measurements into findings
// (findings/finding.h). Facts only; report/finding_text.cc writes the words.
//
//  - slow_node: a host whose ranks are slow together (slow_ranks.h);
//  - slow_rank: a rank that is slow on its own;
//  - slow_function: a function slower on some ranks than on their peers (function_outliers.h),
//    on ranks no slow rank/node finding covers, when making it as fast as on the median rank
//    would save at least the minimum excess *and* more than the spread of local times across
//    ranks (k·1.4826·MAD);
//  - extra_work: what is left — abnormal phases and functions of a rank that no peer
//    measurably waits for (the rank does not set the pace, or the saving is within the ranks'
//    normal spread). An anomaly is never hidden: one finding per rank, with the time it adds
//    per step and no saving (CostMethod::kAddedWork), ranked below every costed finding; its
//    largest function (else phase) names it, the rest are evidence. To tell extra work from
//    timing noise on a busy host, a function must either be called materially more often than
//    on the median rank (work the peers do not do), or exceed the ranks' spread of local times,
//    like a phase; and a function the peers also run must show in the rank's own time (its
//    local time above the median rank's by kShownShare of the function's excess).
// A slow rank or node finding names its worst abnormal phase and its top abnormal functions:
// where the extra time goes. The function that leads (names a finding) is the largest, unless that
// one has the same calls as on its peers and a function the peers do not run (as often) explains
// at least kExtraWorkLeadShare as much: the extra work, not the caller it shows in. Abnormal GPU
// utilization is evidence in these findings (and listed in the report's cluster section), not a
// finding of its own: it has no cost by itself.
#pragma once

#include <vector>

#include "rankscope/cluster/arrival.h"
#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/gpu_utilization.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/phase_outliers.h"
#include "rankscope/cluster/slow_ranks.h"
#include "rankscope/cluster/what_if.h"
#include "rankscope/findings/finding.h"

namespace rankscope {

// Functions named in one slow rank / node finding: at most this many, each explaining at least
// kFunctionShareOfExcess of the rank's extra local time (smaller ones are noise, not the cause).
inline constexpr size_t kFunctionsPerFinding = 5;
inline constexpr double kFunctionShareOfExcess = 0.10;
// Extra work: calls per step above the median rank's by at least this share (and at least one).
inline constexpr double kExtraCallsShare = 0.10;
// A function the peers do not run as often names the finding instead of a larger one with the
// same calls when its excess is at least this share of that one's.
inline constexpr double kExtraWorkLeadShare = 0.8;
// Extra work with the same calls: the rank's local time must exceed the median rank's by at least
// this share of the function's excess.
inline constexpr double kShownShare = 0.5;
// Untraced time at one place is code of a rank's own when it recurs in at least this many gaps.
inline constexpr double kUntracedRecurrences = 3;
// A costed finding whose saving is at least this share of the step is critical.
inline constexpr double kCriticalShare = 0.10;

struct FindingInputs {
  const std::vector<RankSummary>* ranks = nullptr;
  const std::vector<RankHost>* hosts = nullptr;
  const std::vector<RankMetrics>* metrics = nullptr;
  const ArrivalAnalysis* arrival = nullptr;
  const SlowRankAnalysis* slow = nullptr;
  const std::vector<PhaseOutlier>* phases = nullptr;
  const std::vector<FunctionOutlier>* functions = nullptr;
  const UtilizationSummary* utilization = nullptr;
  std::string unit = "step";  // "step" or "window"
  double min_excess_ns = 0;   // the smallest cost worth a finding
  double outlier_k = 3.0;     // for the noise level of local times
};

// Ranked (RankFindings).
std::vector<Finding> BuildClusterFindings(const FindingInputs& in);

// Helpers of the passes that bound a finding's cost afterwards (replay_bound.h, host_wait_bound.h).
// Whether `f` is about ranks: slow_rank, slow_node, slow_function, extra_work, with ranks.
bool IsAboutRanks(const Finding& f);
// Rank indices of `ranks` in `rank_numbers`; empty when one is not there.
std::vector<uint32_t> RankIndices(const std::vector<int64_t>& rank_numbers, const std::vector<int64_t>& ranks);
// The severity of a bounded saving: critical from kCriticalShare of the step, information below
// `min_excess_ns`, a warning between.
Severity BoundedSeverity(double saving_ns, double step_ns, double min_excess_ns);

}  // namespace rankscope
