#include "rankscope/analysis/host_gpu_waits.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rankscope/analysis/wait_functions.h"

namespace rankscope {
namespace {

bool IsHostCall(ActivityKind k) { return k == ActivityKind::kRuntimeCall || k == ActivityKind::kDriverCall; }

bool IsCopyCall(std::string_view name) {
  return name.find("Memcpy") != std::string_view::npos || name.find("memcpy") != std::string_view::npos;
}

// Per call name, the median duration of the host's runtime and driver calls: what such a call
// takes when it does not block.
std::unordered_map<StringId, int64_t> MedianCallNs(const TraceModel& m) {
  std::unordered_map<StringId, std::vector<int64_t>> by_name;
  const SliceTable& s = m.slices;
  for (uint32_t i = 0; i < s.ts.size(); ++i) {
    if (IsHostCall(s.kind[i]) && s.dur[i] > 0) by_name[s.name[i]].push_back(s.dur[i]);
  }
  std::unordered_map<StringId, int64_t> out;
  for (auto& [name, durations] : by_name) {
    auto mid = durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2);
    std::nth_element(durations.begin(), mid, durations.end());
    out[name] = *mid;
  }
  return out;
}

bool Blocked(int64_t dur_ns, int64_t median_ns) {
  return dur_ns >= kBlockedCallNs || (dur_ns >= kBlockedCallMinNs && dur_ns >= kBlockedCallFactor * median_ns);
}

}  // namespace

IntervalSet HostGpuWaits(const TraceModel& m, const std::vector<GpuActivity>& activities) {
  std::vector<Interval> waits;
  const SliceTable& s = m.slices;
  const std::unordered_map<StringId, int64_t> median = MedianCallNs(m);
  for (uint32_t i = 0; i < s.ts.size(); ++i) {
    if (s.dur[i] <= 0) continue;
    const std::string_view name = m.Str(s.name[i]);
    const bool wait = IsHostCall(s.kind[i])
                          ? Blocked(s.dur[i], median.at(s.name[i])) ||
                                IsWaitFunction(FunctionTableKind::kRuntimeCall, name)
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
