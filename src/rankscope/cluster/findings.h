// Findings: the diagnoses of a job in plain words, each with its evidence, its estimated cost
// in step time (what_if.h) and the next thing to look at, ranked by cost.
//
// Kinds:
//  - slow_node: a host whose ranks are slow together (slow_ranks.h);
//  - slow_rank: a rank that is slow on its own;
//  - slow_function: a function slower on a rank than on its peers (function_outliers.h) on a
//    rank no slow rank/node finding covers, reported only when making it as fast as on the
//    median rank would save at least the minimum excess *and* more than the spread of local
//    times across ranks (k·1.4826·MAD): a function that is slower on a rank that does not set
//    the pace costs nothing, and a saving within the ranks' normal spread is not measurable.
// A slow rank or node finding names its worst abnormal phase and its top abnormal functions:
// where the extra time goes. Its "next" points at the top function when that function explains
// at least half of the phase's excess (else at the phase: a sleep or a stall in data loading has
// no function of its own). Abnormal GPU utilization is evidence in these findings (and listed
// in the report's cluster section), not a finding of its own: it has no cost by itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rankscope/cluster/arrival.h"
#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/gpu_utilization.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/phase_outliers.h"
#include "rankscope/cluster/slow_ranks.h"
#include "rankscope/cluster/what_if.h"

namespace rankscope {

enum class FindingKind : uint8_t { kSlowNode, kSlowRank, kSlowFunction };
std::string_view FindingKindName(FindingKind k);

// Functions named in one slow rank / node finding: at most this many, each explaining at least
// kFunctionShareOfExcess of the rank's extra local time (smaller ones are noise, not the cause).
inline constexpr size_t kFunctionsPerFinding = 5;
inline constexpr double kFunctionShareOfExcess = 0.10;

struct Finding {
  FindingKind kind = FindingKind::kSlowRank;
  std::string title;                      // one sentence
  std::vector<uint32_t> ranks;            // summary indices
  std::string host;                       // "" when the finding is not about one host
  std::optional<PhaseOutlier> phase;      // where the extra time goes, when a phase stands out
  std::vector<FunctionOutlier> functions; // the abnormal functions behind it, worst first
  WhatIf what_if;                         // cost = what_if.saving_ns per step
  std::vector<std::string> evidence;
  std::string next;                       // what to look at next
};

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

// Ranked: largest saving first.
std::vector<Finding> BuildFindings(const FindingInputs& in);

// "812 ns", "45.2 us", "12.3 ms", "1.23 s": the durations findings are written with.
std::string FormatDuration(double ns);

}  // namespace rankscope
