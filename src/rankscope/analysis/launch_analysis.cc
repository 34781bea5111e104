#include "rankscope/analysis/launch_analysis.h"

#include <algorithm>
#include <tuple>

#include "rankscope/analysis/stats.h"

namespace rankscope {
namespace {

// Depth over W of one stream from its launch times and start times (each sorted).
QueueDepth StreamDepth(const std::vector<int64_t>& launches, const std::vector<int64_t>& starts, const Window& w) {
  QueueDepth q;
  int64_t depth = 0, prev = w.start, weighted = 0, empty = 0;
  auto advance = [&](int64_t t, int delta) {
    const int64_t len = w.Clip(prev, t);
    weighted += depth * len;
    if (depth == 0) empty += len;
    if (len > 0) q.max_depth = std::max(q.max_depth, depth);
    prev = std::max(prev, t);
    depth += delta;
  };
  size_t i = 0, j = 0;
  while (i < launches.size() || j < starts.size()) {
    // At one instant, starts leave before launches join.
    if (j < starts.size() && (i >= launches.size() || starts[j] <= launches[i])) {
      advance(starts[j++], -1);
    } else {
      advance(launches[i++], +1);
    }
  }
  advance(w.end, 0);
  q.mean_depth = static_cast<double>(weighted) / static_cast<double>(w.length());
  q.empty_ns = empty;
  return q;
}

std::vector<QueueDepth> QueueDepths(const TraceModel& m, const std::vector<GpuActivity>& acts, const Window& w) {
  struct Stream {
    int32_t device, stream;
    std::vector<int64_t> launches, starts;
  };
  std::vector<Stream> streams;  // a handful: found by linear search
  for (const GpuActivity& a : acts) {
    if (a.launch == kNoSlice || a.cls == ActivityClass::kSync || a.stream < 0) continue;
    auto it = std::find_if(streams.begin(), streams.end(),
                           [&](const Stream& s) { return s.device == a.device && s.stream == a.stream; });
    if (it == streams.end()) it = streams.insert(streams.end(), Stream{a.device, a.stream, {}, {}});
    const int64_t launch = m.slices.ts[a.launch];
    it->launches.push_back(launch);
    it->starts.push_back(std::max(a.start, launch));
  }
  std::sort(streams.begin(), streams.end(),
            [](const Stream& a, const Stream& b) { return std::tie(a.device, a.stream) < std::tie(b.device, b.stream); });
  std::vector<QueueDepth> out;
  for (Stream& s : streams) {
    std::sort(s.launches.begin(), s.launches.end());
    std::sort(s.starts.begin(), s.starts.end());
    QueueDepth q = StreamDepth(s.launches, s.starts, w);
    q.device = s.device;
    q.stream = s.stream;
    out.push_back(q);
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
