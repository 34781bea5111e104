// Collectives: every collective the rank took part in, from whatever evidence its trace has —
// communication kernels (NCCL/RCCL/HCCL, --comm-pattern), a CPU backend's transfer spans
// (gloo's "gloo:all_reduce" on its worker threads, in CPU-only and GPU traces alike), else
// record_param_comms ops, else c10d's dispatcher ops — each collective once, decoded into op,
// algorithm, protocol, dtype, message bytes and group size, with algbw/busbw, exposed time (the
// rank's wait) and overlap with compute, per type and per instance.
#pragma once

#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/gpu_timeline.h"
#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

// Bytes per element of a dtype as the profiler or a kernel name spells it ("Float", "float",
// "BFloat16", "f16", "__nv_bfloat16", ...); 0 when unknown.
int ElementBytes(std::string_view dtype);

// busbw = algbw × factor: 2(n-1)/n for all-reduce; (n-1)/n for all-gather, reduce-scatter and
// all-to-all; 1 for broadcast, reduce and send/recv. 0 when n is unknown and the factor needs it.
double BusBandwidthFactor(std::string_view canonical_op, int64_t group_size);

struct CollectiveInputs {
  const std::vector<GpuActivity>* activities = nullptr;
  const GpuTimeline* timeline = nullptr;
  const std::vector<ProfilerStep>* steps = nullptr;
  const IntervalSet* host_compute = nullptr;  // the training threads' CPU ops (with the GPU's compute
                                              // kernels: the rank's own work, for CPU collectives)
  size_t max_instances = kDefaultMaxCollectiveInstances;
};

// Fills collective_types, process_groups, collectives, omitted_collectives, comm_busy_ns and
// comm_host_overlap_ns of `out`.
void AnalyzeCollectives(const TraceModel& model, const Window& window, const CollectiveInputs& in, RankSummary* out);

// Tracks that run a CPU backend's collectives (gloo's worker threads): not training threads.
std::vector<uint32_t> CollectiveTracks(const TraceModel& model);

}  // namespace rankscope
