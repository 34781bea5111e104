// Why each GPU stream is idle. Activities (kernels, memcpy, memset) of one stream are taken in
// start order; the gap before an activity (from the latest end of those before it) is
//  - host wait: the activity's launch call began after the gap opened (the CPU was late);
//  - kernel wait: otherwise, when the gap is shorter than the threshold (30 µs by default):
//    the overhead between back-to-back kernels;
//  - other: otherwise (waiting on another stream, an event, the host, ...).
// Gaps are clipped to W. Time in W before the stream's first activity or after its last is
// "edge" time. Per stream: busy + host wait + kernel wait + other + edge = |W|.
#pragma once

#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

std::vector<StreamIdle> AnalyzeIdleByStream(const TraceModel& model, const std::vector<GpuActivity>& activities,
                                            const Window& window, int64_t kernel_wait_threshold_ns);

}  // namespace rankscope
