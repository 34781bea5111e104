// What-if: the step time if some ranks did better, from the local times of rank_metrics.h.
//
// The slowest local time sets the pace of a synchronous job (everyone else waits for it in
// collectives). If ranks S behaved like the median rank, the new pace is the largest local time
// once S's are replaced by the median local time:
//   saving = max_r local_r - max(max_{r not in S} local_r, median local)     (never negative)
//   estimated step = job step - saving, with job step = median over ranks of the mean step.
// For a function that is slower on one rank by an excess E, that rank's local time drops by E
// instead. The estimate assumes the waiting is exposed (not hidden behind other work) and that
// the remaining ranks keep their local times.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/cluster/rank_metrics.h"

namespace rankscope {

struct WhatIf {
  double step_ns = 0;            // the job's step time now
  double estimated_step_ns = 0;  // ... with the change
  double saving_ns = 0;          // step_ns - estimated_step_ns
};

double JobStepNs(const std::vector<RankMetrics>& metrics);
double MedianLocalNs(const std::vector<RankMetrics>& metrics);

// Ranks `fixed` (summary indices) get the median local time.
WhatIf WhatIfLikeMedian(const std::vector<RankMetrics>& metrics, const std::vector<uint32_t>& fixed);

struct RankSaving {
  uint32_t rank = 0;      // summary index
  double saving_ns = 0;   // per step
};

// Each rank's local time drops by its saving (to no lower than the median local time).
WhatIf WhatIfFaster(const std::vector<RankMetrics>& metrics, const std::vector<RankSaving>& savings);

}  // namespace rankscope
