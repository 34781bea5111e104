// The GPU timeline of W: one sweep over every activity's start and end gives
//  - busy(all GPU activity) and busy per class (unions),
//  - the class that owns each instant (compute > communication > memory > sync > idle),
//  - each activity's share of the instants its class owns (k activities of the owning class
//    running together get 1/k each): the basis of every GPU function's bottleneck ratio,
//  - |communication ∩ compute| for the overlap.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "rankscope/analysis/gpu_activity.h"
#include "rankscope/analysis/interval_set.h"
#include "rankscope/analysis/window.h"

namespace rankscope {

struct GpuTimeline {
  IntervalSet busy;     // union of all GPU activity within W
  IntervalSet compute;  // union of compute kernels within W
  std::array<int64_t, kNumActivityClasses> class_busy_ns{};  // |union of the class| within W
  std::array<int64_t, kNumActivityClasses> exposed_ns{};     // instants the class owns
  int64_t idle_ns = 0;                                       // |W| - busy
  int64_t comm_compute_overlap_ns = 0;                       // |communication ∩ compute|
  std::vector<double> owned_ns;  // per activity (same index as the input vector)
};

GpuTimeline SweepGpuTimeline(const std::vector<GpuActivity>& activities, const Window& window);

}  // namespace rankscope
