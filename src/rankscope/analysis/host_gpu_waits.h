// The host's waits for its GPU: the instants a host thread is blocked until GPU work is done.
//
// A GPU job's step ends on the host. Work that only the GPU does makes a step longer only where
// a host waits for it: a synchronize call (cudaStreamSynchronize and friends: wait_functions.h),
// a copy that returns after its own transfer has ended (a copy to pageable host memory blocks
// even when called Async: from the call's start to the transfer's end), a runtime or driver call
// that blocked (a launch into a full queue — each one as long as a kernel —, an allocation that
// synchronizes: kBlockedCallNs or longer, or kBlockedCallFactor times its name's median and at
// least kBlockedCallMinNs), a CPU op that waits (c10d's Work::wait, a tensor's value read on the
// host: wait_functions.h). A host that never waits runs ahead of its GPU, and a slower kernel
// costs the job nothing while the GPU has idle time to absorb it (cluster/host_wait_bound.h uses
// the per-step sums of these waits, steps[].host_gpu_wait_ns). Counting a call that was only slow
// (descheduled) as a wait makes that bound looser, never wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/interval_set.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

// A runtime or driver call at least this long blocked the host (a launch or copy call takes
// microseconds when it does not wait); so did one this many times its name's median duration and
// at least kBlockedCallMinNs long.
inline constexpr int64_t kBlockedCallNs = 1'000'000;
inline constexpr int64_t kBlockedCallFactor = 10;
inline constexpr int64_t kBlockedCallMinNs = 50'000;

// The union of the host's waits (trace clock); `activities` as CollectGpuActivities returns them.
IntervalSet HostGpuWaits(const TraceModel& model, const std::vector<GpuActivity>& activities);

}  // namespace rankscope
