#include "rankscope/analysis/launch_analysis.h"

#include <algorithm>

#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

std::vector<QueueDepth> QueueDepths(const TraceModel& m, const std::vector<GpuActivity>& acts, const Window& w) {
  struct Event {
    int32_t device, stream;
    int64_t time;
    int32_t delta;  // +1 launch, -1 start
  };
  std::vector<Event> events;
  for (const GpuActivity& a : acts) {
    if (a.launch == kNoSlice || a.cls == ActivityClass::kSync || a.stream < 0) continue;
    const int64_t launch = m.slices.ts[a.launch];
    events.push_back({a.device, a.stream, launch, +1});
    events.push_back({a.device, a.stream, std::max(a.start, launch), -1});
  }
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    if (x.device != y.device) return x.device < y.device;
    if (x.stream != y.stream) return x.stream < y.stream;
    return x.time != y.time ? x.time < y.time : x.delta < y.delta;  // starts leave before launches join
  });
  std::vector<QueueDepth> out;
  for (size_t i = 0; i < events.size();) {
    QueueDepth q{events[i].device, events[i].stream};
    int64_t depth = 0, prev = w.start, weighted = 0, empty = 0;
    size_t j = i;
    for (; j < events.size() && events[j].device == q.device && events[j].stream == q.stream; ++j) {
      const int64_t len = w.Clip(prev, events[j].time);
      weighted += depth * len;
      if (depth == 0) empty += len;
      if (len > 0) q.max_depth = std::max(q.max_depth, depth);
      prev = std::max(prev, events[j].time);
      depth += events[j].delta;
    }
    const int64_t tail = w.Clip(prev, w.end);
    weighted += depth * tail;
    if (depth == 0) empty += tail;
    if (tail > 0) q.max_depth = std::max(q.max_depth, depth);
    q.mean_depth = static_cast<double>(weighted) / static_cast<double>(w.length());
    q.empty_ns = empty;
    out.push_back(q);
    i = j;
  }
  return out;
}

size_t Bucket(int64_t delay) {
  size_t b = 0;
  while (b < kLaunchDelayBuckets.size() && delay >= kLaunchDelayBuckets[b]) ++b;
  return b;
}

}  // namespace

std::vector<LaunchRecord> LaunchRecords(const TraceModel& m, const std::vector<GpuActivity>& acts, const Window& w,
                                        uint64_t* unlinked) {
  std::vector<LaunchRecord> out;
  *unlinked = 0;
  for (const GpuActivity& a : acts) {
    if (a.cls == ActivityClass::kSync || !w.Contains(a.start)) continue;
    if (a.launch == kNoSlice) {
      ++*unlinked;
      continue;
    }
    if (!a.first_of_launch) continue;
    const int64_t call_start = m.slices.ts[a.launch], call_ns = m.slices.dur[a.launch];
    out.push_back({m.slices.name[a.launch], std::max<int64_t>(0, a.start - (call_start + call_ns)), call_ns,
                   a.end - a.start});
  }
  return out;
}

LaunchDelayStats SummarizeLaunchRecords(std::vector<LaunchRecord>& records) {
  LaunchDelayStats s;
  std::vector<int64_t> delays;
  delays.reserve(records.size());
  int64_t call_total = 0;
  for (const LaunchRecord& r : records) {
    delays.push_back(r.delay_ns);
    call_total += r.call_ns;
  }
  const DurationStats d = Summarize(delays);
  s.count = d.count;
  s.median_ns = d.median;
  s.p99_ns = d.p99;
  s.max_ns = d.max;
  if (d.count > 0) {
    s.mean_ns = d.total / static_cast<int64_t>(d.count);
    s.launch_call_mean_ns = call_total / static_cast<int64_t>(d.count);
  }
  return s;
}

LaunchSummary AnalyzeLaunches(const TraceModel& m, const std::vector<GpuActivity>& acts, const Window& w) {
  LaunchSummary out;
  std::vector<LaunchRecord> records = LaunchRecords(m, acts, w, &out.unlinked_activities);
  for (const LaunchRecord& r : records) ++out.histogram[Bucket(r.delay_ns)];
  out.all = SummarizeLaunchRecords(records);
  std::stable_sort(records.begin(), records.end(), [](const LaunchRecord& a, const LaunchRecord& b) { return a.api < b.api; });
  for (size_t i = 0; i < records.size();) {
    size_t j = i;
    while (j < records.size() && records[j].api == records[i].api) ++j;
    std::vector<LaunchRecord> group(records.begin() + static_cast<std::ptrdiff_t>(i),
                                    records.begin() + static_cast<std::ptrdiff_t>(j));
    LaunchDelayStats s = SummarizeLaunchRecords(group);
    s.api = std::string(m.Str(records[i].api));
    out.by_api.push_back(std::move(s));
    i = j;
  }
  std::sort(out.by_api.begin(), out.by_api.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  out.queues = QueueDepths(m, acts, w);
  return out;
}

}  // namespace rankscope
