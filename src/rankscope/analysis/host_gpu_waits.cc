#include "rankscope/analysis/host_gpu_waits.h"

#include <string_view>

#include "rankscope/analysis/wait_functions.h"

namespace rankscope {
namespace {

bool IsHostCall(ActivityKind k) { return k == ActivityKind::kRuntimeCall || k == ActivityKind::kDriverCall; }

bool IsCopyCall(std::string_view name) {
  return name.find("Memcpy") != std::string_view::npos || name.find("memcpy") != std::string_view::npos;
}

}  // namespace

IntervalSet HostGpuWaits(const TraceModel& m, const std::vector<GpuActivity>& activities) {
  std::vector<Interval> waits;
  const SliceTable& s = m.slices;
  for (uint32_t i = 0; i < s.ts.size(); ++i) {
    if (s.dur[i] <= 0) continue;
    const std::string_view name = m.Str(s.name[i]);
    const bool wait = IsHostCall(s.kind[i])
                          ? s.dur[i] >= kBlockedCallNs || IsWaitFunction(FunctionTableKind::kRuntimeCall, name)
                          : s.kind[i] == ActivityKind::kHostOp && IsWaitFunction(FunctionTableKind::kCpuOp, name);
    if (wait) waits.push_back({s.ts[i], s.ts[i] + s.dur[i]});
  }
  // A copy call that outlived its own transfer waited for it (and for the work queued before it).
  for (const GpuActivity& a : activities) {
    if (a.launch == kNoSlice || !IsCopyCall(m.Str(s.name[a.launch]))) continue;
    const int64_t start = s.ts[a.launch];
    const int64_t end = start + s.dur[a.launch];
    if (a.end > start && a.end <= end) waits.push_back({start, a.end});
  }
  return IntervalSet::Union(waits);
}

}  // namespace rankscope
