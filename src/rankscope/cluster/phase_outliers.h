// Abnormal step phases: the data loading, forward, backward, optimizer or "other" time per step
// (docs/definitions.md, "Steps and phases") in which a rank stands out from its peers, on the
// CPU side (the phase's wall time on the training thread) and, in GPU traces, on the GPU side
// (busy time of the work launched in the phase). Same robust rule and minimum excess as
// functions. Only per-step numbers have phases: without steps there are none.
#pragma once

#include <vector>

#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

struct PhaseOutlier {
  StepPhase phase = StepPhase::kOther;
  bool gpu = false;       // GPU side (work launched in the phase) or CPU side
  uint32_t rank = 0;      // index of the summary
  double value_ns = 0;    // per step
  double median_ns = 0;
  double threshold_ns = 0;
  double excess_ns = 0;
};

// Worst first.
std::vector<PhaseOutlier> FindPhaseOutliers(const std::vector<RankSummary>& ranks, const std::vector<RankMetrics>& metrics,
                                            const OutlierRule& rule, double min_excess_ns);

}  // namespace rankscope
