// Untraced time: instants of a step in which the process records nothing. A profile without
// Python stacks (torch.profiler's default) holds CPU ops, annotations and runtime calls; the
// Python between them (a time.sleep, file I/O, a lock, a pure-Python loop) leaves a gap on the
// training thread. A rank that sleeps 12 ms before its forward shows the sleep nowhere else: its
// phases and functions look like its peers', only its arrival at the collectives is late.
//
// Each gap of at least kMinUntracedGapNs in which no training thread runs a recorded slice, up to
// the first CPU collective in flight in it (a rank waiting for its peers inside a gloo all-reduce
// is waiting, and after it the thread waits to be woken, on a busy host for tens of milliseconds:
// neither is code of its own), is an instance of a row keyed by where it lies: "between A and B",
// A the outermost slice that ended last before it, B the outermost one that starts it. The
// row's name is the same on every rank that runs the same code, so the cluster compares a
// rank's untraced time at one place in its step with its peers' at the same place. With Python
// stacks the frames cover the thread and the table is (nearly) empty.
//
// Left out: ProfilerStep#N (it spans the step), rankscope's collector threads, the threads that
// run a CPU backend's collectives. Memory: one row per distinct (A, B) with a gap, one duration
// per gap in the window (FunctionAccumulator), capped like every function table.
#pragma once

#include <vector>

#include "rankscope/analysis/interval_set.h"
#include "rankscope/analysis/rank_summary.h"
#include "rankscope/analysis/window.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

// A gap shorter than this is the interpreter between two ops (tens of microseconds), not code.
inline constexpr int64_t kMinUntracedGapNs = 100'000;

// `order` is SlicesByStart(model) (slice_order.h).
FunctionTable BuildUntracedTable(const TraceModel& model, const std::vector<uint32_t>& order, const Window& window,
                                 const IntervalSet& gpu_busy, size_t max_rows);

}  // namespace rankscope
