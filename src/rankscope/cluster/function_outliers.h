// Abnormal workers per function: the kernel, memory op, runtime call, CPU op, Python call path
// or collective type that takes longer on some ranks than on their peers.
//
// The value compared is the function's time per step on each rank (Σ |instance ∩ W| / steps;
// collectives: the busy time of their instances, so concurrent ones are not counted twice). A
// rank whose table lacks the function has 0 when its table is complete, and is left out of the
// comparison when its table was capped (the function may sit below the cap). A rank is abnormal
// for the function by the robust rule (robust_rule.h), and the finding is kept only when the
// excess over the peer median is at least `min_excess_ns` (a share of the median step time).
//
// Keys: kernels by name + grid|block, memory ops / runtime calls / CPU ops by name, Python call
// paths by path (summed over threads: thread ids differ between processes; object addresses in
// builtin frames are masked as "0x?" for the same reason), collectives by op,
// dtype, algorithm, protocol, group size and GPU/CPU. A Python path is not reported when a
// deeper path of the same rank accounts for 90 % of its excess (the callee is the answer).
#pragma once

#include <string>
#include <vector>

#include "rankscope/cluster/rank_metrics.h"
#include "rankscope/cluster/robust_rule.h"

namespace rankscope {

enum class FunctionKind : uint8_t { kKernel, kMemoryOp, kRuntimeCall, kCpuOp, kPythonPath, kCollective };
std::string_view FunctionKindName(FunctionKind k);  // "kernel", "memory_op", ...

struct FunctionOutlier {
  FunctionKind kind = FunctionKind::kKernel;
  std::string name;
  std::string detail;        // kernels: grid|block
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
};

// One function's time per step on every rank it is compared on (the values the robust rule
// sees): ranks whose complete table lacks the function are there with 0; ranks whose table was
// capped and lacks it are not.
struct FunctionSample {
  uint32_t rank = 0;         // index of the summary
  double value_ns = 0;       // time per step
  double calls = 0;          // calls per step
  int64_t per_call_ns = 0;   // median call
};
struct FunctionSamples {
  FunctionKind kind = FunctionKind::kKernel;
  std::string name;
  std::string detail;
  std::vector<FunctionSample> samples;  // by rank index
};
// Every function of every rank, by kind, name and detail.
std::vector<FunctionSamples> CollectFunctionSamples(const std::vector<RankSummary>& ranks,
                                                    const std::vector<RankMetrics>& metrics);

// Worst first (largest excess).
std::vector<FunctionOutlier> FindFunctionOutliers(const std::vector<RankSummary>& ranks,
                                                  const std::vector<RankMetrics>& metrics, const OutlierRule& rule,
                                                  double min_excess_ns);

}  // namespace rankscope
