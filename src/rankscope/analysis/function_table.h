// Per-function summaries: count, total, median and p99 per execution, bottleneck and
// proportion. Callers turn instances into samples keyed by a dense function id; this file
// does the rest with one sort, so no per-event allocation happens.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/interval_set.h"
#include "rankscope/analysis/rank_summary.h"
#include "rankscope/analysis/window.h"

namespace rankscope {

struct FunctionSample {
  uint32_t key = 0;  // dense function id
  int64_t start = 0;
  int64_t end = 0;
  double owned_ns = 0;  // GPU functions: the instance's share of the instants its class owns
};

// How a function's bottleneck time is measured.
enum class BottleneckRule : uint8_t {
  kOwnedGpuTime,   // GPU function: sum of its instances' owned time
  kStackWhileGpuIdle,  // CPU function: |union of its instances ∩ W ∖ GPU busy|
};

// Fills count/total/median/p99/max/in_window/bottleneck of rows[key] from the samples
// (reordered). Instances count when they start in W; in-window time clips them to W.
void AggregateSamples(std::vector<FunctionSample>& samples, const Window& window, BottleneckRule rule,
                      const IntervalSet& gpu_busy, std::vector<FunctionStat>& rows);

// Drops rows without instances in W, sorts worst first (bottleneck, in-window time, name) and
// keeps the `max_rows` worst plus every row with at least kKeepShare x `window_ns` in the window
// (at most kMaxKeptRows in all), counting the rest (definitions.h).
FunctionTable FinishTable(std::vector<FunctionStat> rows, size_t max_rows, int64_t window_ns);

}  // namespace rankscope
