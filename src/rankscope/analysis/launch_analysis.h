// Launch delay and launch-queue depth.
//
// Launch delay of a GPU activity = max(0, activity start − (launch call start + its duration)),
// over the activities that start in W and are the first activity of their launch call (the
// later kernels of one cudaGraphLaunch wait on their predecessors, not on the launch).
// Queue depth of a stream at time t = activities whose launch call has begun but which have
// not started yet (an activity that starts before its launch call counts from its start).
#pragma once

#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

struct LaunchRecord {
  StringId api;        // the launch call's name
  int64_t delay_ns;
  int64_t call_ns;     // the launch call's duration
  int64_t gpu_ns;      // the activity's duration
};

// One record per activity the launch-delay definition covers (syncs excluded).
std::vector<LaunchRecord> LaunchRecords(const TraceModel& model, const std::vector<GpuActivity>& activities,
                                        const Window& window, uint64_t* unlinked);

// Count, mean, median, p99, max of the records (reordered).
LaunchDelayStats SummarizeLaunchRecords(std::vector<LaunchRecord>& records);

LaunchSummary AnalyzeLaunches(const TraceModel& model, const std::vector<GpuActivity>& activities, const Window& window);

}  // namespace rankscope
