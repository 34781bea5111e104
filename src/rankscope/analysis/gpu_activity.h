// The GPU activities of one rank, each with its class and the CPU call that launched it.
//
// The launch link is the runtime or driver call (cudaLaunchKernel, cuLaunchKernel,
// cudaGraphLaunch, cudaMemcpyAsync, hipLaunchKernel, ...) with the same `correlation` id.
#pragma once

#include <cstdint>
#include <vector>

#include "rankscope/analysis/classifier.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope {

inline constexpr uint32_t kNoSlice = 0xFFFFFFFFu;

struct GpuActivity {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t slice = 0;
  uint32_t launch = kNoSlice;  // the launching runtime/driver call, if linked
  int32_t device = -1;
  int32_t stream = -1;
  ActivityClass cls = ActivityClass::kNone;
  bool first_of_launch = true;  // false for the 2nd.. activity of one launch (CUDA graphs)
};
static_assert(sizeof(GpuActivity) == 40, "GpuActivity is a hot struct: keep it small");

// Every classified GPU activity, sorted by start time.
std::vector<GpuActivity> CollectGpuActivities(const TraceModel& model, ActivityClassifier& classifier);

// Runtime/driver calls by correlation id, for joining GPU activity to its launch.
class LaunchIndex {
 public:
  explicit LaunchIndex(const TraceModel& model);
  uint32_t Find(int64_t correlation) const;  // kNoSlice when absent

 private:
  std::vector<std::pair<int64_t, uint32_t>> by_correlation_;
};

}  // namespace rankscope
