// CPU-side function tables: CUDA/HIP runtime and driver calls (cudaLaunchKernel,
// cuLaunchKernel, cudaGraphLaunch, hipLaunchKernel, cudaStreamSynchronize, ...), CPU ops, and
// Python call paths per thread. A CPU-side function's bottleneck is the time it is on the
// stack while the GPU is idle: the time the GPU waited on the host inside it. Without GPU
// activity the GPU is idle throughout, so it is the time the function is on the stack.
#pragma once

#include "rankscope/analysis/interval_set.h"
#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

// `order` is SlicesByStart(model) (slice_order.h).
FunctionTable BuildRuntimeCallTable(const TraceModel& model, const std::vector<uint32_t>& order, const Window& window,
                                    const IntervalSet& gpu_busy, size_t max_rows);

FunctionTable BuildCpuOpTable(const TraceModel& model, const std::vector<uint32_t>& order, const Window& window,
                              const IntervalSet& gpu_busy, size_t max_rows);

// Python functions (with_stack=True) keyed by call path "f1|f2|...|fn", root first, per thread.
// The threads of rankscope's collector are left out; `collector_threads` (may be null) counts them.
FunctionTable BuildPythonPathTable(const TraceModel& model, const std::vector<uint32_t>& order, const Window& window,
                                   const IntervalSet& gpu_busy, size_t max_rows, uint32_t* collector_threads = nullptr);

// The tracks on which one of rankscope's collector threads runs (a frame of its thread entry), sorted.
std::vector<uint32_t> CollectorThreadTracks(const TraceModel& model);

// "8979 (pt_main_thread)": a thread as the report shows it.
std::string ThreadLabel(const TraceModel& model, uint32_t track);

}  // namespace rankscope
