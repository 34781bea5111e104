#include "rankscope/cluster/cluster_diagnosis.h"

#include "rankscope/cluster/cost_model.h"
#include "rankscope/cluster/cpu_contention.h"
#include "rankscope/cluster/gpu_work_cost.h"
#include "rankscope/cluster/host_outliers.h"
#include "rankscope/cluster/host_wait_bound.h"
#include "rankscope/cluster/replay_bound.h"
#include "rankscope/cluster/significance.h"
#include "rankscope/cluster/slower_ops.h"
#include "rankscope/cluster/stalled_calls.h"
#include "rankscope/cluster/step_series.h"
#include "rankscope/cluster/uneven_timing.h"
#include "rankscope/cluster/unrecorded_cpu.h"

namespace rankscope {
namespace {

// The ranks that the job-wide findings name with a cost (ParallelInputs::stragglers). In a pipelined
// job a slow_rank compared ranks of different stages (MergeParallelFindings drops it): not one.
std::vector<int64_t> CostedRanks(const std::vector<Finding>& findings, bool pipelined) {
  std::vector<int64_t> out;
  for (const Finding& f : findings) {
    const bool about_ranks = (f.kind == FindingKind::kSlowRank && !pipelined) || f.kind == FindingKind::kSlowNode ||
                             f.kind == FindingKind::kSlowFunction || f.kind == FindingKind::kExtraWork;
    if (about_ranks && f.cost.saving_ns > 0) out.insert(out.end(), f.ranks.begin(), f.ranks.end());
  }
  return out;
}

}  // namespace

StatusOr<ClusterDiagnosis> DiagnoseCluster(const std::vector<RankSummary>& ranks, const ClusterOptions& options) {
  ClusterDiagnosis d;
  d.options = options;
  RANKSCOPE_ASSIGN_OR_RETURN(d.hosts, AssignHosts(ranks, options.hosts, options.capture_hosts));
  const bool per_step = PerStep(ranks);
  d.unit = per_step ? "step" : "window";
  for (const RankSummary& r : ranks) {
    d.rank_numbers.push_back(r.rank.rank);
    d.metrics.push_back(ComputeRankMetrics(r, per_step));
  }
  d.min_excess_ns = options.min_cost_share * JobStepNs(d.metrics);

  d.matching = MatchCollectives(ranks);
  d.clock = EstimateClockOffsets(ranks, d.hosts, d.matching);
  const OutlierRule rule{options.outlier_k, options.outlier_margin};
  d.arrival = AnalyzeArrivals(ranks, d.matching, d.clock, rule);

  d.slow = LocateSlowRanks(d.metrics, d.arrival, d.hosts, rule, d.min_excess_ns);
  d.phases = FindPhaseOutliers(ranks, d.metrics, rule, d.min_excess_ns);
  // The job's layout first: in a pipelined job functions are compared within each stage.
  d.layout = InferLayout(ranks, options.layout ? &*options.layout : nullptr);
  // Every function's samples, collected once: the outliers and the slow hosts' findings read them.
  std::vector<FunctionSamples> functions = CollectFunctionSamples(ranks, d.metrics, d.min_excess_ns);
  d.functions = FindFunctionOutliers(functions, rule, d.min_excess_ns,
                                     d.layout.has_pipeline() ? d.layout.stage : std::vector<int64_t>{});
  d.utilization = SummarizeUtilization(d.metrics, rule);
  // Step by step (significance.h): an excess that is not there in most steps is noise.
  const StepSeries series = AlignSteps(ranks);
  ApplyStepSignificance(series, d.hosts, &d.slow, &d.phases);

  std::vector<uint32_t> slow;
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    if (d.slow.slow[r]) slow.push_back(r);
  }
  // With steps, slow ranks and nodes are costed step by step (cost_model.h), the total alike; a
  // saving averaged over the steps is a share of their mean.
  const double step_ns = MeanStepNs(series);
  if (series.steps() > 0 && series.ranks() == ranks.size()) {
    std::vector<bool> group(ranks.size(), false);
    for (uint32_t r : slow) group[r] = true;
    d.total = WhatIfGroupLikePeers(series, group, step_ns);
  } else {
    d.total = WhatIfLikeMedian(d.metrics, slow);
  }
  d.findings = BuildClusterFindings({&ranks, &d.hosts, &d.metrics, &d.arrival, &d.slow, &d.phases, &d.functions,
                              &d.utilization, d.unit, d.min_excess_ns, options.outlier_k});
  // A function finding whose ranks are abnormal only through calls that stalled is their host's,
  // not the function's (stalled_calls.h): told as a note before anything costs it.
  NoteStalledCalls(d.functions, d.rank_numbers, d.hosts, d.metrics, &d.findings);
  CostSlowGroupsByStep(series, d.rank_numbers, step_ns, d.min_excess_ns, &d.findings);
  // Hooks after the rules: hosts slow together (host_outliers.h), then the per-step cost of the
  // anomalies the median what-if left uncosted (cost_model.h).
  AddSlowHostFindings({&ranks, &d.metrics, &d.hosts, &series, step_ns, d.min_excess_ns,
                       options.outlier_margin, &functions, d.layout.has_pipeline() ? &d.layout.stage : nullptr},
                      &d.findings);
  const std::vector<SlowerOps> slower_ops = FindSlowerOps(functions, ranks);
  std::vector<FunctionSamples>().swap(functions);
  CostExtraWork(series, d.arrival, d.rank_numbers, step_ns, d.min_excess_ns, &d.findings);
  CostSlowFunctionsByStep(series, d.rank_numbers, step_ns, d.min_excess_ns, &d.findings);
  // Parallelism-aware comparison (issue 16): its own file; it replaces the job-wide findings
  // that compared ranks of different pipeline stages.
  d.parallel = FindParallelProblems({&ranks, &d.metrics, &d.layout, rule, d.unit, d.min_excess_ns,
                                     CostedRanks(d.findings, d.layout.has_pipeline())});
  // The steps replayed as a dependency graph (issue 16): fidelity, the decomposition of the
  // slow operations, and the cost of the findings about ranks and stages when it is faithful.
  const StepGraph graph(ranks, d.matching, d.clock, d.layout);
  d.replay = graph.Summarize();
  if (d.replay.faithful()) {
    CostByReplay(graph, d.rank_numbers, d.min_excess_ns, &d.parallel.findings);
    // Elsewhere the per-step costs stand, within what the replay says the ranks could save where
    // the ranks' steps do not line up (replay_bound.h).
    if (!d.layout.has_pipeline()) {
      BoundByReplay(graph, series, d.rank_numbers, d.min_excess_ns, &d.findings);
      // GPU work is costed where its delay shows: at the collectives (gpu_work_cost.h).
      CostWorkOfGpuRanksByReplay({&graph, &d.replay, &ranks, &d.hosts, &d.rank_numbers, d.min_excess_ns}, &d.findings);
    }
  }
  // Last of the costs: on GPUs, no more than the hosts waited for their GPUs (host_wait_bound.h).
  BoundByHostWaits(ranks, series, d.rank_numbers, d.min_excess_ns, &d.findings);
  MergeParallelFindings(d.layout, d.parallel, &d.findings);
  // MergeParallelFindings ranks the findings. A step-to-step imbalance that the ranks' wait for a
  // CPU can explain is the host's, not the input's (cpu_contention.h), when the traces say.
  d.cpu_wait = MeasureCpuWait(ranks, d.metrics);
  bool reattributed = AttributeImbalanceToContention(d.cpu_wait, d.rank_numbers, &d.findings);
  // ... or, where no such record says so, that the ranks ran the same work (uneven_timing.h).
  reattributed = AttributeImbalanceToTiming(ranks, d.rank_numbers, d.parallel.imbalance_steps, &d.findings) ||
                 reattributed;
  if (reattributed) RankFindings(&d.findings);
  // ... and a rank's extra CPU time there delays its peers too, which the costs leave out.
  NoteContendedCpu(d.cpu_wait, d.hosts, d.rank_numbers, d.min_excess_ns, &d.findings);
  // A rank that does its peers' work, each operation slower: its CPU or GPU, not its code.
  NoteSlowerOps(slower_ops, d.rank_numbers, &d.findings);
  // Each finding is costed with the others still there; what fixing them all saves (cost_model.h).
  if (!d.layout.has_pipeline()) {
    d.all_findings = WhatIfAllFindings(series, d.rank_numbers, step_ns, d.findings);
    if (d.replay.faithful()) BoundByReplay(graph, series, d.rank_numbers, &d.all_findings);
    BoundByHostWaits(ranks, series, d.rank_numbers, &d.all_findings);
  }
  // Last: CPU time no trace shows has no cost to add to the others (unrecorded_cpu.h).
  if (AddUnrecordedCpuFindings({&ranks, &d.cpu_wait, &d.hosts, &d.rank_numbers, &d.metrics, rule, d.min_excess_ns,
                                d.unit, JobStepNs(d.metrics)},
                               &d.findings)) {
    RankFindings(&d.findings);
  }
  return d;
}

}  // namespace rankscope
