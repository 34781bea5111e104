// Cluster diagnosis: the reduce step of the data flow (docs/architecture.md, docs/cluster.md).
// From the per-rank summaries alone (the traces are gone by now) it matches collectives across
// ranks, estimates clock offsets, measures who arrives last, compares every rank's step, phases
// and functions with its peers', and turns what stands out into ranked findings with a what-if
// cost. Each stage is its own file in this folder; this one runs them in order.
#pragma once

#include <string>
#include <vector>

#include "rankscope/cluster/arrival.h"
#include "rankscope/cluster/clock_offsets.h"
#include "rankscope/cluster/cluster_options.h"
#include "rankscope/cluster/collective_matching.h"
#include "rankscope/cluster/cpu_contention.h"
#include "rankscope/cluster/findings.h"
#include "rankscope/cluster/function_outliers.h"
#include "rankscope/cluster/gpu_utilization.h"
#include "rankscope/cluster/host_map.h"
#include "rankscope/cluster/layout.h"
#include "rankscope/cluster/parallel_findings.h"
#include "rankscope/cluster/phase_outliers.h"
#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/slow_ranks.h"
#include "rankscope/cluster/step_replay.h"
#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/what_if.h"
#include "rankscope/base/status.h"

namespace rankscope {

struct ClusterDiagnosis {
  ClusterOptions options;
  std::vector<int64_t> rank_numbers;  // per rank index: the rank
  std::string unit = "step";    // numbers are per "step", or per "window" when a rank has no steps
  double min_excess_ns = 0;     // options.min_cost_share × the median step time
  std::vector<RankHost> hosts;  // per rank index
  std::vector<RankMetrics> metrics;
  CollectiveMatching matching;
  ClockEstimate clock;
  ArrivalAnalysis arrival;
  SlowRankAnalysis slow;
  std::vector<PhaseOutlier> phases;
  std::vector<FunctionOutlier> functions;
  UtilizationSummary utilization;
  std::vector<RankCpuWait> cpu_wait;  // per rank index, where the traces record it (cpu_contention.h)
  WhatIf total;                 // every slow rank and node like the median rank
  CombinedWhatIf all_findings;  // every finding about ranks fixed at once (cost_model.h)
  JobLayout layout;             // process groups, stages (cluster/layout.h)
  ParallelAnalysis parallel;    // stage and peer comparison (cluster/parallel_findings.h)
  StepReplay replay;            // the steps replayed: fidelity and what-ifs (cluster/step_replay.h)
  std::vector<Finding> findings;
};

// `ranks` are the analysed ranks (rank numbers resolved); indices in the result refer to them.
// Fails only on a host map that does not cover every rank.
StatusOr<ClusterDiagnosis> DiagnoseCluster(const std::vector<RankSummary>& ranks, const ClusterOptions& options);

}  // namespace rankscope
