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
// B the outermost slice that starts the next recorded run and A the outermost one that ended last
// before the gap on B's thread (a helper thread's call that happens to end in one step's gap does
// not make that step's gap another row). The row's name is the same on every rank that runs the
// same code, so the cluster compares a rank's untraced time at one place in its step with its
// peers' at the same place. With Python stacks the frames cover the thread and the table is
// (nearly) empty.
//
// An annotation (a `record_function` range) is a label, not code: the instants inside one in which
// no op, runtime call or Python frame runs on a training thread are the range's own untraced time,
// the row "inside X" (X the innermost range: a nested one keeps its own), cut the same way. A pause
// or pure-Python work in a user's `with record_function("## backward ##")` block is named by it.
//
// Left out: ProfilerStep#N (it spans the step), rankscope's collector threads, the threads that
// run a CPU backend's collectives. Memory: one row per distinct (A, B) with a gap and per
// annotation name with untraced time inside, one duration per gap in the window
// (FunctionAccumulator), capped like every function table; the annotations nested in each range
// while it is measured.
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
