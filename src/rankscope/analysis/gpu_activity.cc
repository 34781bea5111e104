#include "rankscope/analysis/gpu_activity.h"

#include <algorithm>

namespace rankscope {

LaunchIndex::LaunchIndex(const TraceModel& m) {
  const SliceTable& s = m.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    const ActivityKind c = s.kind[i];
    if ((c == ActivityKind::kRuntimeCall || c == ActivityKind::kDriverCall) && s.correlation[i] != kNoId) {
      by_correlation_.emplace_back(s.correlation[i], static_cast<uint32_t>(i));
    }
  }
  // Stable: when two calls share an id, the first in the file wins.
  std::stable_sort(by_correlation_.begin(), by_correlation_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

uint32_t LaunchIndex::Find(int64_t correlation) const {
  if (correlation == kNoId) return kNoSlice;
  auto it = std::lower_bound(by_correlation_.begin(), by_correlation_.end(), correlation,
                             [](const auto& e, int64_t c) { return e.first < c; });
  return it != by_correlation_.end() && it->first == correlation ? it->second : kNoSlice;
}

std::vector<GpuActivity> CollectGpuActivities(const TraceModel& m, ActivityClassifier& classifier) {
  const SliceTable& s = m.slices;
  const LaunchIndex launches(m);
  std::vector<GpuActivity> out;
  for (size_t i = 0; i < s.size(); ++i) {
    const ActivityClass cls = classifier.ClassOf(i);
    if (cls == ActivityClass::kNone) continue;
    const GpuActivityInfo* g = m.GpuInfo(i);
    GpuActivity a;
    a.start = s.ts[i];
    a.end = s.ts[i] + s.dur[i];
    a.slice = static_cast<uint32_t>(i);
    a.launch = launches.Find(s.correlation[i]);
    a.device = g->device;
    a.stream = g->stream;
    a.cls = cls;
    out.push_back(a);
  }
  std::stable_sort(out.begin(), out.end(), [](const GpuActivity& a, const GpuActivity& b) { return a.start < b.start; });
  // One launch call can start several activities (cudaGraphLaunch); mark all but the first.
  std::vector<std::pair<uint32_t, uint32_t>> by_launch;  // (launch slice, index in out)
  for (uint32_t k = 0; k < out.size(); ++k) {
    if (out[k].launch != kNoSlice) by_launch.emplace_back(out[k].launch, k);
  }
  std::sort(by_launch.begin(), by_launch.end());
  for (size_t k = 1; k < by_launch.size(); ++k) {
    if (by_launch[k].first == by_launch[k - 1].first) out[by_launch[k].second].first_of_launch = false;
  }
  return out;
}

}  // namespace rankscope
