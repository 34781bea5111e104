// Abnormal workers per function: the kernel, memory op, runtime call, CPU op, Python call path
// or collective type that takes longer on some ranks than on their peers.
//
// The value compared is the function's time per step on each rank (Σ |instance ∩ W| / steps;
// collectives: the busy time of their instances, so concurrent ones are not counted twice). A
// rank whose table lacks the function ran it for less than the table's omitted bound (its
// largest omitted row, definitions.h: under 0.1 % of the window unless the table hit its row
// cap): it counts as 0 when that bound is below a tenth of `min_excess_ns`, and is left out of
// the comparison otherwise. So a function is found however many distinct functions the traces
// hold. A rank is abnormal for the function by the robust rule (robust_rule.h), and the finding
// is kept only when the excess over the peer median is at least `min_excess_ns` (a share of the
// median step time).
//
// Every level that can explain an excess is compared, and the one that explains it is kept:
//  - kernels by name + grid|block, and by name alone (every launch shape together): when one
//    shape carries 80 % of the name's excess the shape is reported, else the name (a slowdown
//    spread over many launch shapes, each below the minimum cost, is one finding at the name);
//  - the GPU time of the kernels each CPU op launched ("kernels_of_op"): reported when no kernel
//    row of the rank explains 80 % of it (several kernels of one op slower together);
//  - memory ops, runtime calls and CPU ops by name (a CPU op is not reported when a reported Python
//    path of the same rank carries 80-110 % of its excess: the same time, seen from the user's
//    code, e.g. a backward hook inside autograd's evaluate_function);
//  - Python call paths by path, summed over threads (thread ids differ between processes; object
//    addresses and the hashed file names of generated code are masked for the same reason,
//    path_key.h): a path is not reported when a deeper path of the same rank accounts for 80 % of
//    its excess (the callee is the answer); a path some ranks reach through a wrapper (activation
//    checkpointing, a compiled function) is compared under the path of the ranks that do not
//    (wrapped_paths.h);
//  - collectives by op, dtype, algorithm, protocol, group size and GPU/CPU (without the group size
//    where a rank's trace does not say it: a gloo rank in process groups of several sizes);
//  - untraced time by where it lies ("between A and B", analysis/untraced_time.h): the Python a
//    profile without stacks does not record, a gap on the training thread;
//  - step phases are compared on their own (phase_outliers.h).
// Waits (a sleep, a lock, a GPU synchronisation; analysis/wait_functions.h) are compared like any
// function and flagged `wait`.
//
// A rank abnormal only through a few calls that stalled (analysis/definitions.h kStallFactor:
// each over 10x the function's p99 call, a call every other step at most), calling the function
// as often as its peers (within 10 %), is flagged `stalled`:
// compared again without the stalled calls' time beyond the p99 call, it is not abnormal. Its
// function is not slower; the thread was held off its CPU during those calls (stalled_calls.h).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

enum class FunctionKind : uint8_t { kKernel, kMemoryOp, kRuntimeCall, kCpuOp, kPythonPath, kCollective, kKernelsOfOp,
                                   kUntraced };
std::string_view FunctionKindName(FunctionKind k);  // "kernel", "memory_op", ..., "kernels_of_op"

struct FunctionOutlier {
  FunctionKind kind = FunctionKind::kKernel;
  std::string name;
  std::string detail;        // kernels: grid|block, or "" for every launch shape of the name
  uint32_t rank = 0;         // index of the summary
  double value_ns = 0;       // time per step on this rank
  double median_ns = 0;      // median over the ranks compared (this one included)
  double threshold_ns = 0;   // excess that counts as abnormal (robust rule)
  double excess_ns = 0;      // value - median
  double calls = 0;          // calls per step on this rank
  double median_calls = 0;   // ... median over the ranks compared
  int64_t per_call_ns = 0;   // median duration of one call on this rank
  int64_t median_per_call_ns = 0;  // median over the ranks compared of their median call
  size_t compared = 0;       // ranks compared
  bool wait = false;         // the function waits (a sleep, a lock, a GPU synchronisation)
  double stall_ns = 0;       // per step: this rank's stalled calls' time beyond the p99 call
  double stalls = 0;         // stalled calls per step on this rank
  bool stalled = false;      // without its stalled calls this rank is not abnormal
  double steady_median_ns = 0;  // the median over the ranks compared without their stalled calls
};

// A function compared without the few calls that stalled on a rank (see above): no more than one
// every other step, or they are a pattern of the function, not stalls.
inline constexpr double kMaxStallsPerStep = 0.5;

// One function's time per step on every rank it is compared on (the values the robust rule
// sees): a rank whose table lacks the function is there with 0 when the rows its table left out
// are all below a tenth of `min_excess_ns`, and is not there otherwise.
struct FunctionValue {
  uint32_t rank = 0;         // index of the summary
  double value_ns = 0;       // time per step
  double calls = 0;          // calls per step
  int64_t per_call_ns = 0;   // median call
  // Floats: one value per function and rank, thousands of ranks (the reduce step's largest table).
  float stall_ns = 0;        // stalled calls' time beyond the p99 call, per step
  float stalls = 0;          // stalled calls per step

  // More of the same function on the same rank (another thread, another key merged into this
  // one): times, calls and stalls add up, the median call is the larger.
  void Add(const FunctionValue& more) {
    value_ns += more.value_ns;
    calls += more.calls;
    per_call_ns = std::max(per_call_ns, more.per_call_ns);
    stall_ns += more.stall_ns;
    stalls += more.stalls;
  }
};
static_assert(sizeof(FunctionValue) == 40, "FunctionValue is hot: one per function and rank");
struct FunctionSamples {
  FunctionKind kind = FunctionKind::kKernel;
  std::string name;
  std::string detail;
  bool wait = false;                   // the function waits (analysis/wait_functions.h)
  std::vector<FunctionValue> samples;  // by rank index
};
// Every function of every rank, by kind, name and detail (kernels: also by name alone, detail "").
std::vector<FunctionSamples> CollectFunctionSamples(const std::vector<RankSummary>& ranks,
                                                    const std::vector<RankMetrics>& metrics, double min_excess_ns);

// Worst first (largest excess).
std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<RankSummary>& ranks,
                                                  const std::vector<RankMetrics>& metrics, const OutlierRule& rule,
                                                  double min_excess_ns);
// The same from CollectFunctionSamples(ranks, metrics, min_excess_ns), collected once for the
// callers that need them too (host_outliers.h).
//
// `stage_of` (per rank index; empty: one group) makes the comparison stage-aware, for pipelined
// jobs (layout.h): when every stage has four ranks or more (enough for the robust rule), a rank
// is compared with the ranks of its own stage, which run the same layers; with smaller stages,
// with the ranks of every stage that runs the function. Either way a function only some stages
// run (the embedding on the first, the loss on the last) is not those stages' extra work.
std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<FunctionSamples>& functions,
                                                  const OutlierRule& rule, double min_excess_ns,
                                                  const std::vector<int64_t>& stage_of = {});

// Whether Python call path `outer` holds `inner` (a call inside it: "a|b" holds "a|b|c"), so that
// `inner`'s time is part of `outer`'s.
bool CallPathHolds(std::string_view outer, std::string_view inner);

}  // namespace rankscope
