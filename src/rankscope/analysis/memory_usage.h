// Memory from the profiler's [memory] events (profile_memory=True): peak allocated and reserved
// bytes per device over W (and over the whole trace), and which CPU ops allocate the most in W
// (an allocation belongs to the innermost CPU op running on its thread at that instant).
#pragma once

#include "rankscope/analysis/rank_summary.h"

namespace rankscope {

MemorySummary AnalyzeMemory(const TraceModel& model, const Window& window, size_t top_ops);

}  // namespace rankscope
