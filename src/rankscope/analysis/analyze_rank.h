// AnalyzeRank: one rank's TraceModel -> its RankSummary (every per-rank analysis, in one place).
#pragma once

#include "rankscope/analysis/classifier.h"
#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/rank_summary.h"
#include "rankscope/base/status.h"

namespace rankscope {

struct AnalysisOptions {
  WindowRequest window;
  const CommPatterns* comm_patterns = nullptr;  // extra communication kernel patterns; may be null
  int64_t kernel_wait_threshold_ns = kDefaultKernelWaitThresholdNs;
  size_t max_rows = kDefaultMaxRows;
  size_t max_collective_instances = kDefaultMaxCollectiveInstances;
  size_t top_allocators = 20;
  // false: the per-function tables (runtime calls, CPU ops, Python paths, kernels, memory
  // operations) stay empty; a caller that needs only steps, phases, GPU time and collectives
  // (compare) saves their cost.
  bool function_tables = true;
  // false: no idle time per stream and no launch statistics (RankSummary::idle_by_stream,
  // launch): only `analyze`'s reports show them; compare and the cluster diagnosis read neither.
  bool stream_analyses = true;
};

// What AnalyzeRank computed on the way that a caller analysing the same model further can reuse
// instead of computing it again (compare's summary: engine/analyze_job.h RankHook).
struct RankIntermediates {
  std::vector<uint32_t> order;             // SlicesByStart(model)
  std::vector<GpuActivity> activities;     // CollectGpuActivities(model, classifier)
  std::vector<ProfilerStep> steps;         // FindSteps(model).steps: ProfilerStep#N or derived
};

// Fails only when no window can be chosen (e.g. --steps names steps the trace lacks). When
// `keep` is given, the intermediates are moved into it.
StatusOr<RankSummary> AnalyzeRank(const TraceModel& model, const AnalysisOptions& options,
                                  RankIntermediates* keep = nullptr);

}  // namespace rankscope
