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

// The same statistics for a CPU-side table (BottleneckRule::kStackWhileGpuIdle), computed while
// the instances arrive in start order (the CPU tables walk the slices by start, `order`): per
// function only the durations of its instances in W are kept (8 bytes each) instead of whole
// samples, so that a trace of 10 M tiny CPU ops does not hold a second copy of them.
class FunctionAccumulator {
 public:
  FunctionAccumulator(const Window& window, const IntervalSet& gpu_busy) : w_(window), busy_(gpu_busy) {}
  // The instances of one key must come in start order; keys may interleave.
  void Add(uint32_t key, int64_t start, int64_t end);
  // Fills count/total/median/p99/max/in_window/bottleneck of rows[key] (rows.size() >= keys).
  void Finish(std::vector<FunctionStat>& rows);

 private:
  struct State {
    int64_t run_start = 0, run_end = INT64_MIN;  // the current union of overlapping instances
    size_t cursor = 0;                           // into the GPU busy set (runs come in time order)
    double idle = 0;                             // |union ∩ W ∖ busy| of the runs closed so far
    int64_t in_window = 0;
    std::vector<int64_t> durations;              // of the instances that start in W
  };
  void CloseRun(State& s) const;

  const Window& w_;
  const IntervalSet& busy_;
  std::vector<State> states_;
};

// Drops rows without instances in W, sorts worst first (bottleneck, in-window time, name) and
// keeps the `max_rows` worst plus every row with at least kKeepShare x `window_ns` in the window
// (at most kMaxKeptRows in all), counting the rest (definitions.h).
FunctionTable FinishTable(std::vector<FunctionStat> rows, size_t max_rows, int64_t window_ns);

}  // namespace rankscope
