#include "rankscope/analysis/idle_breakdown.h"

#include <algorithm>

#include "rankscope/analysis/interval_set.h"

namespace rankscope {
namespace {

struct StreamKey {
  int32_t device, stream;
  auto operator<=>(const StreamKey&) const = default;
};

// Activities of one stream (indices, in start order) -> its idle breakdown.
StreamIdle AnalyzeStream(const TraceModel& m, const std::vector<GpuActivity>& acts, const std::vector<uint32_t>& ids,
                         const Window& w, int64_t threshold) {
  StreamIdle r;
  r.device = acts[ids.front()].device;
  r.stream = acts[ids.front()].stream;
  IntervalSet busy;
  int64_t prev_end = INT64_MIN;
  for (uint32_t id : ids) {
    const GpuActivity& a = acts[id];
    if (prev_end != INT64_MIN && a.start > prev_end) {
      const int64_t gap = w.Clip(prev_end, a.start);
      if (gap > 0) {
        ++r.gaps;
        if (a.launch != kNoSlice && m.slices.ts[a.launch] > prev_end) {
          r.host_wait_ns += gap;
        } else if (a.start - prev_end < threshold) {
          r.kernel_wait_ns += gap;
        } else {
          r.other_ns += gap;
        }
      }
    }
    busy.Append(std::max(a.start, w.start), std::min(a.end, w.end));
    prev_end = std::max(prev_end, a.end);
  }
  r.busy_ns = busy.Length();
  r.edge_ns = w.Clip(w.start, acts[ids.front()].start) + w.Clip(prev_end, w.end);
  return r;
}

}  // namespace

std::vector<StreamIdle> AnalyzeIdleByStream(const TraceModel& m, const std::vector<GpuActivity>& acts, const Window& w,
                                            int64_t threshold) {
  std::vector<std::pair<StreamKey, uint32_t>> by_stream;
  for (uint32_t i = 0; i < acts.size(); ++i) {
    const ActivityClass c = acts[i].cls;
    if (c == ActivityClass::kSync || acts[i].stream < 0) continue;  // syncs are not work on the stream
    by_stream.push_back({{acts[i].device, acts[i].stream}, i});
  }
  std::stable_sort(by_stream.begin(), by_stream.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<StreamIdle> out;
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < by_stream.size();) {
    ids.clear();
    size_t j = i;
    for (; j < by_stream.size() && by_stream[j].first == by_stream[i].first; ++j) ids.push_back(by_stream[j].second);
    // `acts` is in start order and the sort was stable, so `ids` is too.
    out.push_back(AnalyzeStream(m, acts, ids, w, threshold));
    i = j;
  }
  return out;
}

}  // namespace rankscope
