// GPU function tables: kernels keyed by name + grid|block, and memory operations keyed by
// name (Memcpy HtoD/DtoH/DtoD/PtoP, Memset). The bottleneck of a GPU function is the time it
// owns on the GPU timeline (see gpu_timeline.h).
#pragma once

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/gpu_timeline.h"
#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

FunctionTable BuildKernelTable(const TraceModel& model, const std::vector<GpuActivity>& activities,
                               const GpuTimeline& timeline, const Window& window, size_t max_rows);

// Kernels keyed by name alone (every grid|block together): a slowdown spread over many launch
// shapes is one row here.
FunctionTable BuildKernelNameTable(const TraceModel& model, const std::vector<GpuActivity>& activities,
                                   const GpuTimeline& timeline, const Window& window, size_t max_rows);

// GPU time of the kernels each CPU op launched (the op with the kernel's External id: the
// innermost op running when the kernel was launched), keyed by the op's name.
FunctionTable BuildKernelsByOpTable(const TraceModel& model, const std::vector<GpuActivity>& activities,
                                    const GpuTimeline& timeline, const Window& window, size_t max_rows);

FunctionTable BuildMemoryOpTable(const TraceModel& model, const std::vector<GpuActivity>& activities,
                                 const GpuTimeline& timeline, const Window& window, size_t max_rows);

// "[8,1,1]|[544,1,1]"
std::string GridBlockText(const GpuActivityInfo& info);

}  // namespace rankscope
